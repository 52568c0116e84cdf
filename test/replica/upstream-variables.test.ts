/**
 * The variables nginx computes after its decision, read by add_header on the answer's head: real nginx
 * and a replica process serve the same configuration in front of the same upstream and get the same
 * requests in the same order. `$upstream_addr`, `$upstream_status` and the upstream times joined over
 * the servers a request tried (`a, b`, `-` where a try never got that far), `$upstream_http_*`,
 * `$upstream_cookie_*`, `$upstream_response_length` at the head (0: no body read yet), `$status`,
 * `$request_time`, `$connection_requests` and `$connection` on a kept connection, `$proxy_host` and
 * `$proxy_port`; a server named by a host name is named by the address connected to. Times are compared by
 * shape (`N.NNN` or `-`), and exactly where nginx's cached clock makes them exact.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const VARIABLES: readonly (readonly [string, string])[] = [
  ['X-Addr', '$upstream_addr'],
  ['X-Up-Status', '$upstream_status'],
  ['X-Connect', '$upstream_connect_time'],
  ['X-Header', '$upstream_header_time'],
  ['X-Response', '$upstream_response_time'],
  ['X-Length', '$upstream_response_length'],
  ['X-Field', '$upstream_http_x_up_field'],
  ['X-Cookie', '$upstream_cookie_b'],
  ['X-No-Cookie', '$upstream_cookie_c'],
  ['X-Status', '$status'],
  ['X-Time', '$request_time'],
  ['X-Requests', '$connection_requests'],
  ['X-Connection', '$connection'],
  ['X-Proxy-Host', '$proxy_host'],
  ['X-Proxy-Port', '$proxy_port'],
];

function body(listen: number, upstream: number, closed: number): string {
  const lines = VARIABLES.map(([name, value]) => `        add_header ${name} "${value}" always;`);
  return `
    upstream two {
        server 127.0.0.1:${closed};
        server 127.0.0.1:${upstream};
    }
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
${lines.join('\n')}
        location /one/ { proxy_pass http://127.0.0.1:${upstream}; }
        location /two/ { proxy_pass http://two; }
        location /down/ { proxy_pass http://127.0.0.1:${closed}; }
        location /named/ { proxy_pass http://localhost:${upstream}; }
        location /ret/ { return 200 "r\\n"; }
    }
`;
}

/** Answers `up` with a field and two cookies; `/one/slow` after 300 ms. */
function upstreamServer(): Server {
  return createServer((req, res) => {
    const answer = () => {
      res.writeHead(200, {
        'X-Up-Field': 'field value',
        'Set-Cookie': ['a=1; Path=/', 'b = two; HttpOnly'],
        'Content-Length': '3',
      });
      res.end('up\n');
    };
    if (req.url === '/one/slow') setTimeout(answer, 300);
    else answer();
  });
}

type Fields = Record<string, string>;

/** The variables' fields of each answer to `targets`, sent on one connection. */
async function send(port: number, targets: readonly string[]): Promise<Fields[]> {
  const requests = targets.map(
    (target, i) =>
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${i === targets.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
  );
  const { text } = await rawExchange(port, [requests.join('')], { timeoutMs: 5000 });
  const names = new Set(VARIABLES.map(([name]) => name.toLowerCase()));
  return text
    .split(/^HTTP\/1\.1 /m)
    .slice(1)
    .map((answer) => {
      const fields: Fields = {};
      for (const line of answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        if (names.has(name)) fields[name] = line.slice(colon + 2);
      }
      return fields;
    });
}

/** Times as their shape; `$connection` left out (each server numbers its connections). */
function shape(fields: Fields): Fields {
  const out: Fields = {};
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'x-connection') continue;
    out[name] = /^x-(connect|header|response|time)$/.test(name) ? value.replace(/\d+\.\d{3}/g, 'T') : value;
  }
  return out;
}

describe('replica vs nginx: the variables known after the decision', () => {
  const upstream = upstreamServer();
  let both: SideBySide;
  let closedPort = 0;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    closedPort = await freePort();
    both = await startSideBySide((port) => body(port, upstreamPort, closedPort));
  });

  after(async () => {
    await both?.stop();
    upstream.close();
  });

  /** The same requests to both: the same fields, by shape; nginx's answers, to assert on. */
  async function same(targets: readonly string[]): Promise<Fields[]> {
    const fromNginx = await send(both.nginxPort, targets);
    const fromReplica = await send(both.replicaPort, targets);
    assert.deepEqual(fromReplica.map(shape), fromNginx.map(shape), targets.join(' '));
    return fromNginx;
  }

  test('one server: its address, status, field and cookie; times at the head, the response not yet', async () => {
    const [answer] = await same(['/one/']);
    assert.equal(answer!['x-up-status'], '200');
    assert.equal(answer!['x-field'], 'field value');
    assert.equal(answer!['x-cookie'], 'two');
    assert.equal(answer!['x-response'], '-');
    assert.equal(answer!['x-length'], '0');
    assert.equal(answer!['x-status'], '200');
    assert.equal(answer!['x-proxy-host'], `127.0.0.1:${answer!['x-proxy-port']}`);
  });

  test('a server that refuses, then one that answers: both joined with ", "', async () => {
    const [answer] = await same(['/two/']);
    assert.equal(answer!['x-addr'], `127.0.0.1:${closedPort}, ${answer!['x-addr']!.split(', ')[1]}`);
    assert.equal(answer!['x-up-status'], '502, 200');
    assert.match(answer!['x-header']!, /^-, \d\.\d{3}$/);
    assert.match(answer!['x-response']!, /^\d\.\d{3}, -$/);
    // the refusing server is left out for fail_timeout now
    assert.equal(answer!['x-proxy-host'], 'two');
    assert.equal(answer!['x-proxy-port'], '80');
    const [again] = await same(['/two/']);
    assert.equal(again!['x-up-status'], '200');
  });

  test('a server named by a host name is named by the address connected to', async () => {
    const [answer] = await same(['/named/']);
    assert.match(answer!['x-addr']!, /^127\.0\.0\.1:\d+$/);
  });

  test('no server answers: 502 with the try recorded', async () => {
    const [answer] = await same(['/down/']);
    assert.equal(answer!['x-status'], '502');
    assert.equal(answer!['x-up-status'], '502');
    assert.equal(answer!['x-header'], '-');
  });

  test('an answer of its own: no upstream variable, $request_time 0.000 within one turn', async () => {
    const [answer] = await same(['/ret/']);
    assert.equal(answer!['x-addr'], undefined);
    assert.equal(answer!['x-time'], '0.000');
  });

  test('$request_time of a slow answer; $connection_requests and $connection on one connection', async () => {
    const answers = await same(['/ret/', '/one/slow', '/ret/']);
    assert.deepEqual(
      answers.map((a) => a['x-requests']),
      ['1', '2', '3'],
    );
    assert.match(answers[1]!['x-time']!, /^0\.[3-9]\d\d$/);
    const replica = await send(both.replicaPort, ['/ret/', '/ret/']);
    assert.equal(replica[0]!['x-connection'], replica[1]!['x-connection']);
    const other = await send(both.replicaPort, ['/ret/']);
    assert.notEqual(other[0]!['x-connection'], replica[0]!['x-connection']);
  });
});
