/**
 * limit_conn against real nginx 1.22: the same configuration in front of one upstream that holds each
 * request until the test lets it go, the same concurrent timeline for both — requests held open, one
 * more past the limit, one let go, another — and the same statuses, `$limit_conn_status` (as the
 * upstream is told it) and error-log lines. Covers several zones on a location (a refusal in the second gives back the first's
 * slot), dry run, `limit_conn_status`, an empty key (the switch off) and one zone shared by locations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { GatedUpstream } from '../helpers/gated-upstream.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';

/** The http body (the oracle's own directives trust X-Forwarded-For from 127.0.0.1; the replica's file adds the same). */
function body(listen: number, upstream: number): string {
  return `
    map $http_x_switch $switched_key {
        default "";
        on $binary_remote_addr;
    }
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    limit_conn_zone $server_name zone=perserver:1m;
    limit_conn_zone $switched_key zone=switched:1m;
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        proxy_set_header X-Limit-Conn-Status $limit_conn_status;
        location /one/ { limit_conn addr 2; proxy_pass http://127.0.0.1:${upstream}; }
        location /two/ {
            limit_conn addr 3;
            limit_conn perserver 1;
            proxy_pass http://127.0.0.1:${upstream};
        }
        location /dry/ {
            limit_conn addr 1;
            limit_conn_dry_run on;
            limit_conn_log_level warn;
            proxy_pass http://127.0.0.1:${upstream};
        }
        location /status/ {
            limit_conn addr 1;
            limit_conn_status 429;
            limit_conn_log_level info;
            proxy_pass http://127.0.0.1:${upstream};
        }
        location /switched/ { limit_conn switched 1; proxy_pass http://127.0.0.1:${upstream}; }
    }
`;
}

interface Answer {
  readonly status: number;
  /** `$limit_conn_status` as the upstream saw it (`proxy_set_header`); empty for a refusal. */
  readonly limitConnStatus: string;
}

/** One request as client `addr`; resolves with what came back. */
async function request(
  port: number,
  path: string,
  addr: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { host: 'cafe.example.com', 'x-forwarded-for': addr, ...headers },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, limitConnStatus: res.status === 200 ? text : '' };
}

/**
 * The timeline: held requests are sent and awaited at the upstream (the count is in effect), then the
 * probe; each step's answers are recorded in order.
 */
async function play(port: number, gate: GatedUpstream, tag: string): Promise<string[]> {
  const out: string[] = [];
  const record = (step: string, a: Answer) => out.push(`${step}: ${a.status} ${a.limitConnStatus}`);
  const held: { path: string; answer: Promise<Answer> }[] = [];
  const probe = (path: string, addr: string, headers: Record<string, string> = {}) =>
    request(port, `${path}?${tag}`, addr, headers);
  const hold = async (path: string, addr: string, headers: Record<string, string> = {}) => {
    const full = `${path}?${tag}-hold${held.length}`;
    const answer = request(port, full, addr, headers);
    held.push({ path: full, answer });
    await gate.arrived(full);
  };
  const letGo = async (index: number, step: string) => {
    gate.release(held[index]!.path);
    record(step, await held[index]!.answer);
  };

  // One location, 2 per address: a third is refused; one let go, the next passes.
  await hold('/one/a', '10.0.0.1');
  await hold('/one/b', '10.0.0.1');
  record('one: third', await probe('/one/c', '10.0.0.1'));
  record('one: other address', await probe('/one/x', '10.0.0.2'));
  await letGo(0, 'one: first let go');
  await hold('/one/d', '10.0.0.1');
  await letGo(1, 'one: second let go');
  await letGo(2, 'one: fourth let go');

  // Two zones: perserver refuses the second request, which gives its addr slot back.
  await hold('/two/a', '10.0.1.1');
  record('two: perserver full', await probe('/two/b', '10.0.1.1'));
  await hold('/one/e', '10.0.1.1'); // addr: 2 now (the refused one holds nothing)
  record('one: addr at 2', await probe('/one/f', '10.0.1.1'));
  await letGo(3, 'two: let go');
  await letGo(4, 'one: let go');

  // Dry run: over the limit, let through, and said so (at warn).
  await hold('/dry/a', '10.0.2.1');
  await hold('/dry/b', '10.0.2.1');
  await letGo(5, 'dry: first');
  await letGo(6, 'dry: over the limit, let through');

  // limit_conn_status 429, logged at info.
  await hold('/status/a', '10.0.3.1');
  record('status: second', await probe('/status/b', '10.0.3.1'));
  await letGo(7, 'status: let go');

  // The switch: an empty key is not limited; on, it is.
  await hold('/switched/a', '10.0.4.1');
  record('switched off', await probe('/switched/b', '10.0.4.1'));
  await hold('/switched/c', '10.0.4.1', { 'x-switch': 'on' });
  record('switched on', await probe('/switched/d', '10.0.4.1', { 'x-switch': 'on' }));
  await letGo(8, 'switched: first let go');
  await letGo(9, 'switched: on, let go');
  return out;
}

/** Error-log lines about requests, with what legitimately differs masked. */
function requestLines(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => line.includes('limiting connections'))
    .map((line) =>
      line
        .replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} /, 'DATE ')
        .replace(/\] \d+#\d+: \*\d+ /, '] PID: *N ')
        .replace(/\?[nr](-hold\d+)?/, '?N')
        // fetch sends the address it connects to as Host
        .replace(/host: "127\.0\.0\.1:\d+"/, 'host: "HOST"'),
    );
}

describe('limit_conn: the replica against nginx on one concurrent timeline', () => {
  const dir = new TempDir();
  let gate: GatedUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let nginxAnswers: string[];
  let replicaAnswers: string[];

  before(async () => {
    gate = await GatedUpstream.start();
    const upstream = gate.port;
    const listen = await freePort();
    const realIp = '    set_real_ip_from 127.0.0.1;\n    real_ip_header X-Forwarded-For;\n';
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${realIp}${body(listen, upstream)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, upstream) }),
      startReplica(config, ['--error-log', dir.file('error.log'), '--error-log-level', 'info'], {
        status: false,
      }),
    ]);
    nginxAnswers = await play(nginx.port, gate, 'n');
    replicaAnswers = await play(replica.ports[String(listen)]!, gate, 'r');
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    gate?.close();
    dir.remove();
  });

  test('the same statuses, step by step; nginx’s $limit_conn_status as the engine sets it', () => {
    // the upstream saw the same `proxy_set_header X-Limit-Conn-Status $limit_conn_status` values too
    assert.deepEqual(replicaAnswers, nginxAnswers);
    assert.deepEqual(nginxAnswers, [
      'one: third: 503 ',
      'one: other address: 200 PASSED',
      'one: first let go: 200 PASSED',
      'one: second let go: 200 PASSED',
      'one: fourth let go: 200 PASSED',
      'two: perserver full: 503 ',
      'one: addr at 2: 503 ',
      'two: let go: 200 PASSED',
      'one: let go: 200 PASSED',
      'dry: first: 200 PASSED',
      'dry: over the limit, let through: 200 REJECTED_DRY_RUN',
      'status: second: 429 ',
      'status: let go: 200 PASSED',
      'switched off: 200 ',
      'switched on: 503 ',
      'switched: first let go: 200 ',
      'switched: on, let go: 200 PASSED',
    ]);
  });

  test('the same error-log lines, line for line', () => {
    const expected = requestLines(nginx.errorLog());
    const line = (level: string, zone: string, uri: string, client: string, dry = false) =>
      `DATE [${level}] PID: *N limiting connections${dry ? ', dry run,' : ''} by zone "${zone}", client: ${client}, server: cafe.example.com, request: "GET ${uri}?N HTTP/1.1", host: "HOST"`;
    assert.deepEqual(expected, [
      line('error', 'addr', '/one/c', '10.0.0.1'),
      line('error', 'perserver', '/two/b', '10.0.1.1'),
      line('error', 'addr', '/one/f', '10.0.1.1'),
      line('warn', 'addr', '/dry/b', '10.0.2.1', true),
      line('info', 'addr', '/status/b', '10.0.3.1'),
      line('error', 'switched', '/switched/d', '10.0.4.1'),
    ]);
    assert.deepEqual(requestLines(dir.read('error.log')), expected);
  });
});
