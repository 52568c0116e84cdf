/**
 * `add_header` as nginx's headers filter adds it: real nginx and a replica process serve the same
 * configuration in front of the same upstream and get the same requests, each on its own connection;
 * the fields the configuration adds (and the upstream's ETag, Last-Modified, Cache-Control, Link that
 * it meets) must come back the same from both, in the same order: inheritance from http to server to
 * location, `always`, the statuses added to without it, values with variables (a map, a regex
 * capture, `$limit_req_status`), empty values, duplicates, returned, proxied and refused answers, and
 * a location's `if`.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

/** The statuses `return` answers under the server's lines: nginx adds to some only with `always`. */
const STATUSES = [200, 201, 204, 206, 301, 302, 303, 304, 307, 308, 400, 403, 404, 429, 500, 503];

function statusLocations(): string {
  return STATUSES.map((code) => {
    const redirect = code >= 301 && code <= 308 && code !== 304;
    return `        location = /st/${code} { return ${code}${redirect ? ' /elsewhere' : ''}; }`;
  }).join('\n');
}

function body(listen: number, upstream: number, closed: number, root: string): string {
  return `
    add_header X-Http "http $uri";
    map $arg_m $mapped { default none; yes mapped-yes; }
    limit_req_zone $arg_k zone=addh:1m rate=1r/m;
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
        add_header X-Server server;
        add_header X-Server-Always "server $host" always;
${statusLocations()}
        location /inherit/ { return 200 "inherit\\n"; }
        location /own/ {
            add_header X-Own "own $host $mapped";
            add_header X-Own second;
            add_header X-Empty "";
            add_header X-Empty-Var $arg_none;
            add_header Cache-Control no-store;
            add_header Link "</style.css>; rel=preload";
            return 200 "own\\n";
        }
        location /uri/ {
            add_header X-Uri "u=$uri";
            return 200 "uri\\n";
        }
        location ~ ^/cap/(\\w+)$ {
            add_header X-Cap "cap-$1";
            return 200 "cap\\n";
        }
        location /redirect/ {
            add_header X-Redirect r;
            return 302 /elsewhere;
        }
        location /error/ {
            add_header X-Error-Always e always;
            add_header X-Error-Not n;
            return 500;
        }
        location /limited/ {
            limit_req zone=addh nodelay;
            add_header X-Limit "$limit_req_status";
            add_header X-Limit-Always "$limit_req_status" always;
            proxy_pass http://127.0.0.1:${upstream};
        }
        location /up/ {
            proxy_pass http://127.0.0.1:${upstream};
            add_header X-Proxied yes;
            add_header X-Proxied-Always yes always;
            add_header Cache-Control private;
            add_header ETag '"ours"';
        }
        location /up-lm/ {
            proxy_pass http://127.0.0.1:${upstream};
            add_header Last-Modified "";
            add_header X-Lm gone;
        }
        location /down/ {
            proxy_pass http://127.0.0.1:${closed};
            add_header X-Down-Always d always;
            add_header X-Down-Not n;
        }
        location /files/ {
            root ${root};
            add_header X-File "f $uri";
            add_header ETag "";
            add_header Last-Modified "Thu, 01 Jan 1970 00:00:01 GMT";
        }
        location /ws/ {
            proxy_pass http://127.0.0.1:${upstream};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection upgrade;
            add_header X-Ws-Always w always;
            add_header X-Ws-Not n;
        }
        location /if/ {
            add_header X-Loc loc;
            if ($arg_a) { add_header X-If-A "a-$arg_a"; }
            if ($arg_b) { return 200 "b\\n"; }
            if ($arg_c) { add_header X-If-C c always; return 404; }
            return 200 "loc\\n";
        }
        location /if-up/ {
            proxy_pass http://127.0.0.1:${upstream};
            add_header X-Loc loc;
            if ($arg_a) { add_header X-If-Up "up-$arg_a"; }
        }
    }
    server {
        listen 127.0.0.1:${listen};
        server_name other;
        location / { return 200 "other\\n"; }
        location /own/ {
            add_header X-Other-Own o;
            return 404;
        }
    }
`;
}

/** Answers with the status its path ends in, with the fields add_header meets; 101 to an upgrade. */
function upstreamServer(): Server {
  const server = createServer((req, res) => {
    const status = Number(/(\d{3})$/.exec(req.url?.split('?')[0] ?? '')?.[1] ?? 200);
    const empty = status === 304 || status === 204;
    res.writeHead(status, {
      'X-Up': 'upstream',
      ETag: '"theirs"',
      'Last-Modified': 'Mon, 02 Jan 2023 03:04:05 GMT',
      'Cache-Control': 'max-age=60',
      ...(empty ? {} : { 'Content-Length': '3' }),
    });
    res.end(empty ? undefined : 'up\n');
  });
  server.on('upgrade', (_req, socket: Socket) => {
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
  });
  return server;
}

/** The fields compared: every `X-` field, and the four the headers filter knows by name. */
const COMPARED = /^(x-.*|etag|last-modified|cache-control|link)$/i;

interface Answer {
  readonly status: number;
  readonly fields: readonly string[];
}

async function send(port: number, target: string, host = 'localhost', method = 'GET'): Promise<Answer> {
  const connection = target.startsWith('/ws/')
    ? 'Upgrade: websocket\r\nConnection: Upgrade'
    : 'Connection: close';
  const request = `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${connection}\r\n\r\n`;
  const until = (text: string) => text.includes('\r\n\r\n');
  const { text } = await rawExchange(port, [request], { timeoutMs: 5000, until });
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  const [statusLine, ...lines] = head.split('\r\n');
  const fields = lines.filter((line) => COMPARED.test(line.slice(0, line.indexOf(':'))));
  return { status: Number(statusLine?.split(' ')[1]), fields };
}

describe('replica vs nginx: add_header', () => {
  const dir = new TempDir();
  const upstream = upstreamServer();
  let both: SideBySide;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const closedPort = await freePort();
    mkdirSync(dir.file('files'));
    dir.write('files/index.html', 'index\n');
    dir.write('files/a.txt', 'a\n');
    // nginx's http level also has the oracle's add_header X-Limit-Req-Status (test/helpers/nginx.ts),
    // which adds nothing here: $limit_req_status is empty where the http level's lines are in force
    both = await startSideBySide((port) => body(port, upstreamPort, closedPort, dir.path));
  });

  after(async () => {
    await both?.stop();
    upstream.close();
    dir.remove();
  });

  /** The same request to both: the same status and compared fields; nginx's answer, to assert on. */
  async function same(target: string, host?: string, method?: string): Promise<Answer> {
    const fromNginx = await send(both.nginxPort, target, host, method);
    const fromReplica = await send(both.replicaPort, target, host, method);
    assert.deepEqual(fromReplica, fromNginx, `${method ?? 'GET'} ${target} (Host: ${host ?? 'localhost'})`);
    return fromNginx;
  }

  test('added to the statuses nginx deems safe, to the others only with always', async () => {
    for (const code of STATUSES) {
      const answer = await same(`/st/${code}`);
      assert.equal(answer.status, code);
      const safe = [200, 201, 204, 206, 301, 302, 303, 304, 307, 308].includes(code);
      assert.equal(answer.fields.includes('X-Server: server'), safe, `${code}`);
      assert.ok(answer.fields.includes('X-Server-Always: server localhost'), `${code}`);
    }
  });

  test('a level without add_header inherits all of the enclosing one; one with any replaces them', async () => {
    const inherited = await same('/inherit/');
    assert.deepEqual(inherited.fields, ['X-Server: server', 'X-Server-Always: server localhost']);
    const own = await same('/own/?m=yes');
    assert.ok(!own.fields.some((f) => f.startsWith('X-Server')));
    // the http level's reaches a server with none of its own
    const other = await same('/', 'other');
    assert.deepEqual(other.fields, ['X-Http: http /']);
    const otherOwn = await same('/own/', 'other');
    assert.deepEqual(otherOwn.fields, []);
  });

  test('values with variables; an empty value adds nothing; a name twice is two fields', async () => {
    const own = await same('/own/?m=yes');
    assert.deepEqual(own.fields, [
      'X-Own: own localhost mapped-yes',
      'X-Own: second',
      'Cache-Control: no-store',
      'Link: </style.css>; rel=preload',
    ]);
    await same('/own/');
    await same('/own/', 'LocalHost:80');
    await same('/own/?m=yes', undefined, 'HEAD');
    const cap = await same('/cap/word');
    assert.deepEqual(cap.fields, ['X-Cap: cap-word']);
  });

  test('a value from request data stays one field (nginx splits the answer there)', async () => {
    const target = '/uri/a%0D%0AX-Injected:%20yes';
    const fromNginx = await send(both.nginxPort, target);
    assert.deepEqual(fromNginx.fields, ['X-Uri: u=/uri/a', 'X-Injected: yes']);
    const fromReplica = await send(both.replicaPort, target);
    assert.deepEqual(fromReplica, { status: 200, fields: ['X-Uri: u=/uri/a%0D%0AX-Injected: yes'] });
  });

  test('redirects, error pages, limit_req answers', async () => {
    assert.deepEqual((await same('/redirect/')).fields, ['X-Redirect: r']);
    assert.deepEqual((await same('/error/')).fields, ['X-Error-Always: e']);
    // each key once to each: passed, then the same key again rejected
    const passed = await same('/limited/200?k=one');
    assert.ok(passed.fields.includes('X-Limit: PASSED') && passed.fields.includes('X-Limit-Always: PASSED'));
    const rejected = await same('/limited/200?k=one');
    assert.equal(rejected.status, 503);
    assert.deepEqual(rejected.fields, ['X-Limit-Always: REJECTED']);
  });

  test('proxied answers, a 101 too: added to what the upstream sent; ETag and Last-Modified replaced', async () => {
    for (const code of [200, 201, 304, 404, 500]) {
      const answer = await same(`/up/${code}`);
      assert.equal(answer.status, code);
      assert.equal(answer.fields.includes('X-Proxied: yes'), code < 400);
      assert.ok(answer.fields.includes('X-Proxied-Always: yes'));
    }
    const ok = await same('/up/200');
    assert.ok(ok.fields.includes('ETag: "ours"') && !ok.fields.includes('ETag: "theirs"'));
    assert.deepEqual(
      ok.fields.filter((f) => f.startsWith('Cache-Control')),
      ['Cache-Control: max-age=60', 'Cache-Control: private'],
    );
    const lm = await same('/up-lm/200');
    assert.ok(!lm.fields.some((f) => f.startsWith('Last-Modified')));
    assert.ok(lm.fields.includes('X-Lm: gone'));
    await same('/up/200', undefined, 'HEAD');
    const upgraded = await same('/ws/');
    assert.equal(upgraded.status, 101);
    assert.deepEqual(upgraded.fields, ['X-Ws-Always: w']);
    const down = await same('/down/');
    assert.equal(down.status, 502);
    assert.deepEqual(down.fields, ['X-Down-Always: d']);
  });

  test('answers from disk, an index too: ETag removed, Last-Modified replaced', async () => {
    const file = await same('/files/a.txt');
    assert.equal(file.status, 200);
    assert.deepEqual(file.fields, ['X-File: f /files/a.txt', 'Last-Modified: Thu, 01 Jan 1970 00:00:01 GMT']);
    const index = await same('/files/');
    assert.deepEqual(index.fields, [
      'X-File: f /files/index.html',
      'Last-Modified: Thu, 01 Jan 1970 00:00:01 GMT',
    ]);
    await same('/files/a.txt', undefined, 'HEAD');
    assert.deepEqual((await same('/files/missing')).fields, []);
  });

  test("an if in a location: a request its condition holds for is answered under the if's lines", async () => {
    assert.deepEqual((await same('/if/')).fields, ['X-Loc: loc']);
    assert.deepEqual((await same('/if/?a=1')).fields, ['X-If-A: a-1']);
    // the last if that holds decides; one without add_header has the location's
    assert.deepEqual((await same('/if/?a=1&b=1')).fields, ['X-Loc: loc']);
    const c = await same('/if/?c=1');
    assert.equal(c.status, 404);
    assert.deepEqual(c.fields, ['X-If-C: c']);
    const up = await same('/if-up/200?a=x');
    assert.ok(up.fields.includes('X-If-Up: up-x') && !up.fields.includes('X-Loc: loc'));
    assert.ok((await same('/if-up/200')).fields.includes('X-Loc: loc'));
  });
});
