/**
 * Differential: `limit_rate`, `limit_rate_after`, `set $limit_rate`, `expires` and `$sent_http_*`
 * against nginx — http_variables.t's shape (`$limit_rate` read back, an invalid one 0; several
 * Cache-Control lines joined in the log; `expires epoch` over a proxied answer's Cache-Control; a
 * target nginx cannot read logged with an empty `$uri`), each `expires` form's Expires and
 * Cache-Control (dates compared by their distance from now, as the two clocks differ), and a
 * throttled download's timing from disk, through a proxy and from `return`, and with its first bytes
 * let through.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BODY_BYTES = 64 * 1024;
/** At `limit_rate 4k`: 4 KiB at once, 4 KiB a second later, the head's share at two seconds. */
const SMALL_BYTES = 8 * 1024;
/** A `return` text at `limit_rate 1k`: 1 KiB at once, 1 KiB a second later, the head's share at two. */
const RETURN_BYTES = 2 * 1024;

const http = (port: number, root: string) => `
    log_format cc "$uri: $sent_http_cache_control $limit_rate";
    log_format raw escape=none "$uri:$arg_a$arg_:$limit_rate";
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        access_log ${root}/cc-${port}.log cc;
        location / { return 200 OK; }
        location /set {
            add_header Cache-Control max-age=3600;
            add_header Cache-Control private;
            add_header Cache-Control must-revalidate;
            return 200 OK;
        }
        location /redefine { expires epoch; proxy_pass http://127.0.0.1:${port}/set; }
        location /limit_rate { set $limit_rate $arg_l; add_header X-Rate $limit_rate; return 200 OK; }
        location /e/ { expires $arg_e; return 200 OK; }
        location /fixed/ { expires 2h; return 200 OK; }
        location /missing/ { expires 2h; return 404; }
        location /modified/ { expires modified 1h; alias ${root}/; }
        location /plain/ { alias ${root}/; }
        location /slow/ { limit_rate 32k; alias ${root}/; }
        location /proxied/ { limit_rate 32k; proxy_pass http://127.0.0.1:${port}/plain/; }
        location /after/ { limit_rate 32k; limit_rate_after 32k; alias ${root}/; }
        location /if/ {
            limit_rate 32k;
            expires 1h;
            if ($arg_fast) { limit_rate 0; expires epoch; }
            alias ${root}/;
        }
        location /said/ { limit_rate 1k; return 200 "${'R'.repeat(RETURN_BYTES)}"; }
        location /patient/ { limit_rate 4k; send_timeout 1s; alias ${root}/; }
        location /accel/ { add_header X-Accel-Limit-Rate 4096; alias ${root}/; }
        location /accelerated/ { proxy_pass http://127.0.0.1:${port}/accel/; }
        location /unaccelerated/ {
            proxy_ignore_headers x-accel-limit-rate Vary;
            proxy_pass http://127.0.0.1:${port}/accel/;
        }
        location /raw { access_log ${root}/raw-${port}.log raw; return 200 "$arg_l:$arg_"; }
    }
`;

interface Answer {
  readonly status: number;
  /** The head's fields as `name: value` lines, names lower-cased, in order. */
  readonly fields: readonly string[];
  readonly bodyBytes: number;
  /** ms from the request to its first `firstBytes` body bytes, and to its end. */
  readonly firstMs: number;
  readonly totalMs: number;
}

function get(port: number, path: string, firstBytes = 1, method = 'GET'): Promise<Answer> {
  const startMs = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let bodyBytes = 0;
      let firstMs = -1;
      res.on('data', (chunk: Buffer) => {
        bodyBytes += chunk.length;
        if (firstMs === -1 && bodyBytes >= firstBytes) firstMs = performance.now() - startMs;
      });
      res.on('error', reject);
      res.on('end', () => {
        const fields: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          fields.push(`${res.rawHeaders[i]!.toLowerCase()}: ${res.rawHeaders[i + 1]}`);
        resolve({
          status: res.statusCode!,
          fields,
          bodyBytes,
          firstMs,
          totalMs: performance.now() - startMs,
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The fields `expires` writes (and X-Rate), in order. */
function expiresView(answer: Answer): string[] {
  return answer.fields.filter((f) => /^(expires|cache-control|x-rate):/.test(f));
}

/**
 * The same fields, a date within 2 s of the other's and a max-age within 2 of it: the two servers
 * answer a moment apart, and `expires modified` counts from now.
 */
function assertSameExpires(fromReplica: string[], fromNginx: string[], path: string): void {
  const names = (view: string[]) => view.map((f) => f.slice(0, f.indexOf(':')));
  assert.deepEqual(names(fromReplica), names(fromNginx), path);
  fromReplica.forEach((field, i) => {
    const other = fromNginx[i]!;
    const [seconds, otherSeconds] = field.startsWith('expires: ')
      ? [Date.parse(field.slice(9)) / 1000, Date.parse(other.slice(9)) / 1000]
      : [Number(/max-age=(\d+)/.exec(field)?.[1]), Number(/max-age=(\d+)/.exec(other)?.[1])];
    if (Number.isNaN(seconds) || Number.isNaN(otherSeconds)) assert.equal(field, other, path);
    else assert.ok(Math.abs(seconds - otherSeconds) <= 2, `${path}: ${field} / ${other}`);
  });
}

/** A request line nginx cannot read, sent as it is (an HTTP client would normalise it). */
function sendRaw(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(`${line}\r\nHost: localhost\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text.split('\r\n')[0]!));
  });
}

describe('limit_rate, $limit_rate, expires and $sent_http_*: the replica answers as nginx', () => {
  const dir = new TempDir();
  let both: SideBySide;

  before(async () => {
    dir.write('data', 'X'.repeat(BODY_BYTES));
    dir.write('small', 'Y'.repeat(SMALL_BYTES));
    both = await startSideBySide((port) => http(port, dir.path));
  });

  after(async () => {
    await both?.stop();
    dir.remove();
  });

  test('$limit_rate: set from a size (40k is 40960), 0 when the value is not one', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      assert.deepEqual(expiresView(await get(port, '/limit_rate?l=40k')), ['x-rate: 40960'], `${port}`);
      assert.deepEqual(expiresView(await get(port, '/limit_rate?l=2m')), ['x-rate: 2097152'], `${port}`);
      assert.deepEqual(expiresView(await get(port, '/limit_rate')), ['x-rate: 0'], `${port}`);
      assert.deepEqual(expiresView(await get(port, '/limit_rate?l=1x')), ['x-rate: 0'], `${port}`);
    }
  });

  test('expires: each form, and only on the statuses nginx deems safe', async () => {
    const paths = [
      '/fixed/',
      '/missing/',
      '/e/?e=1h',
      '/e/?e=-1h',
      '/e/?e=+30m',
      '/e/?e=0',
      '/e/?e=epoch',
      '/e/?e=max',
      '/e/?e=off',
      '/e/?e=bad',
      '/e/',
      '/modified/data',
    ];
    for (const path of paths) {
      const fromNginx = expiresView(await get(both.nginxPort, path));
      const fromReplica = expiresView(await get(both.replicaPort, path));
      assertSameExpires(fromReplica, fromNginx, path);
    }
    assert.deepEqual(expiresView(await get(both.replicaPort, '/missing/')), []);
    assert.deepEqual(expiresView(await get(both.replicaPort, '/e/?e=-1h')).slice(1), [
      'cache-control: no-cache',
    ]);
    assert.deepEqual(expiresView(await get(both.replicaPort, '/e/?e=max')), [
      'expires: Thu, 31 Dec 2037 23:55:55 GMT',
      'cache-control: max-age=315360000',
    ]);
  });

  test('a daily expires time: the next one, its max-age counted to it', async () => {
    const e = `@${new Date(Date.now() + 3 * 3600_000).getHours()}h`;
    const fromNginx = expiresView(await get(both.nginxPort, `/e/?e=${e}`));
    const fromReplica = expiresView(await get(both.replicaPort, `/e/?e=${e}`));
    assertSameExpires(fromReplica, fromNginx, e);
    assert.match(fromReplica[0]!, /^expires: .*:00:00 GMT$/);
  });

  test("expires epoch over a proxied answer's three Cache-Control lines: one, no-cache", async () => {
    const fromNginx = await get(both.nginxPort, '/redefine');
    const fromReplica = await get(both.replicaPort, '/redefine');
    assert.deepEqual(expiresView(fromReplica), expiresView(fromNginx));
    assert.deepEqual(
      expiresView(fromReplica).filter((f) => f.startsWith('cache-control')),
      ['cache-control: no-cache'],
    );
  });

  test('a throttled download takes what the rate says, from disk and through a proxy', async () => {
    // 64 KiB and its head at 32 KiB/s: 32 KiB at once, 32 KiB a second later, the rest at 2 s
    const runs = await Promise.all(
      [both.nginxPort, both.replicaPort].flatMap((port) => [
        get(port, '/slow/data'),
        get(port, '/proxied/data'),
        get(port, '/after/data', 60_000),
        // send_timeout runs while the client takes nothing, not while the rate holds the body back
        get(port, '/patient/small'),
        get(port, '/said/'),
      ]),
    );
    const names = ['slow', 'proxied', 'after', 'patient', 'said'];
    const sizes = [BODY_BYTES, BODY_BYTES, BODY_BYTES, SMALL_BYTES, RETURN_BYTES];
    runs.forEach((run, i) => {
      const name = `${i < 5 ? 'nginx' : 'replica'} ${names[i % 5]}`;
      assert.equal(run.bodyBytes, sizes[i % 5], name);
      if (i % 5 !== 2) {
        assert.ok(run.totalMs > 1700 && run.totalMs < 3500, `${name}: ${run.totalMs} ms`);
      } else {
        // limit_rate_after 32k: the first 64 KiB (head included) go at once, the last bytes a second on
        assert.ok(run.firstMs < 700, `${name}: first 60000 bytes after ${run.firstMs} ms`);
        assert.ok(run.totalMs > 700 && run.totalMs < 2500, `${name}: ${run.totalMs} ms`);
      }
    });
  });

  test("a location's if: its own limit_rate and expires over the location's", async () => {
    const runs = await Promise.all(
      [both.nginxPort, both.replicaPort].flatMap((port) => [
        get(port, '/if/data'),
        get(port, '/if/data?fast=1'),
      ]),
    );
    for (const [i, run] of runs.entries()) {
      const name = `${i < 2 ? 'nginx' : 'replica'} ${i % 2 === 0 ? 'slow' : 'fast'}`;
      assert.equal(run.bodyBytes, BODY_BYTES, name);
      if (i % 2 === 0) assert.ok(run.totalMs > 1700 && run.totalMs < 3500, `${name}: ${run.totalMs} ms`);
      else assert.ok(run.totalMs < 700, `${name}: ${run.totalMs} ms`);
    }
    assertSameExpires(expiresView(runs[3]!), expiresView(runs[1]!), '/if/data?fast=1');
    assert.deepEqual(expiresView(runs[3]!), [
      'expires: Thu, 01 Jan 1970 00:00:01 GMT',
      'cache-control: no-cache',
    ]);
    assertSameExpires(expiresView(runs[2]!), expiresView(runs[0]!), '/if/data');
  });

  test("an upstream's X-Accel-Limit-Rate paces the answer; proxy_ignore_headers turns it off", async () => {
    const runs = await Promise.all(
      [both.nginxPort, both.replicaPort].flatMap((port) => [
        get(port, '/accelerated/small'),
        get(port, '/unaccelerated/small'),
      ]),
    );
    for (const [i, run] of runs.entries()) {
      const name = `${i < 2 ? 'nginx' : 'replica'} ${i % 2 === 0 ? 'paced' : 'ignored'}`;
      assert.equal(run.bodyBytes, SMALL_BYTES, name);
      assert.ok(!run.fields.some((f) => f.startsWith('x-accel-limit-rate')), `${name}: not relayed`);
      // 8 KiB at 4 KiB/s: 4 KiB at once, 4 KiB a second later, the head's share at two seconds
      if (i % 2 === 0) assert.ok(run.totalMs > 1700 && run.totalMs < 3500, `${name}: ${run.totalMs} ms`);
      else assert.ok(run.totalMs < 700, `${name}: ${run.totalMs} ms`);
    }
  });

  test("a HEAD's answer is its head: nothing to pace", async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      const answer = await get(port, '/slow/data', 1, 'HEAD');
      assert.equal(answer.status, 200);
      assert.ok(answer.totalMs < 700, `${port}: ${answer.totalMs} ms`);
    }
  });

  test('escape=none writes a variable not found as nothing; $arg_ is one', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      const answer = await get(port, '/raw?l=42&b=1');
      assert.equal(answer.status, 200);
    }
    const line = (port: number) => {
      const path = dir.file(`raw-${port}.log`);
      return existsSync(path) ? readFileSync(path, 'utf8') : '';
    };
    await waitFor(() => line(both.nginxPort) !== '' && line(both.replicaPort) !== '', {
      message: 'the raw lines',
    });
    assert.equal(line(both.replicaPort), line(both.nginxPort));
    assert.equal(line(both.replicaPort), '/raw::0\n');
  });

  test('the access log: $sent_http_cache_control joined, replaced, absent; $uri of a bad target empty', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      for (const path of ['/', '/set', '/redefine']) await get(port, path);
      assert.match(await sendRaw(port, 'GET /../bad_uri HTTP/1.1'), /^HTTP\/1\.1 400 /);
    }
    // each writes a line once its answer is out, which the client may see first
    const lines = (port: number): string[] => {
      const text = readFileSync(dir.file(`cc-${port}.log`), 'utf8');
      return [...new Set(text.split('\n').filter((line) => /^(\/|\/set|\/redefine|): /.test(line)))].sort();
    };
    const complete = (port: number) => lines(port).length === 4;
    await waitFor(() => complete(both.nginxPort) && complete(both.replicaPort), { message: 'the log lines' });
    const fromReplica = lines(both.replicaPort);
    assert.deepEqual(fromReplica, lines(both.nginxPort));
    assert.ok(fromReplica.includes('/set: max-age=3600, private, must-revalidate 0'), fromReplica.join('\n'));
    assert.ok(fromReplica.includes('/redefine: no-cache 0'), fromReplica.join('\n'));
    assert.ok(fromReplica.includes(': - 0'), fromReplica.join('\n'));
    assert.ok(fromReplica.includes('/: - 0'), fromReplica.join('\n'));
  });
});
