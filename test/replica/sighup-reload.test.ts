/**
 * SIGHUP on a replica process reloads its configuration file. With a good file, zones whose key and
 * size are unchanged keep their state (a client already over its burst stays rejected), a zone whose
 * size changed starts afresh, and new locations and realip settings apply at once. With a bad file, the error is logged in
 * nginx's form with file:line, the old configuration stays in force, and the metric says so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, request } from 'undici';
import {
  connectionRefused,
  freePorts,
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

/**
 * The configuration, with `extra` lines in the server block and `changedSize` for one zone; `second`
 * adds a server on another port.
 */
function config(listen: number, upstream: number, changedSize: string, extra = '', second = 0): string {
  return `events {}
http {
    limit_req_zone $binary_remote_addr zone=kept:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=resized:${changedSize} rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen ${listen};
        location /kept { limit_req zone=kept burst=1 nodelay; proxy_pass http://backend; }
        location /resized { limit_req zone=resized burst=1 nodelay; proxy_pass http://backend; }
${extra}
    }
${second === 0 ? '' : `    server { listen ${second}; location / { return 200 "second\\n"; } }`}
}
`;
}

describe('replica: SIGHUP reload', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let replica: ReplicaRun;
  let listen: number;
  /** A second server's port, dropped by the reload, and the port the reload adds instead. */
  let dropped: number;
  let added: number;
  let base: string;
  let file: string;

  before(async () => {
    const ports = await freePorts(3);
    [listen, dropped, added] = [ports[0]!, ports[1]!, ports[2]!];
    upstream = await startUpstream();
    file = dir.write('nginx.conf', config(listen, upstream.port, '1m', '', dropped));
    replica = await startReplica(file);
    base = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    dir.remove();
  });

  async function statuses(path: string, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(`${base}${path}`);
      await res.body.dump();
      out.push(res.statusCode);
    }
    return out;
  }

  async function get(path: string) {
    const res = await request(`${base}${path}`);
    return { status: res.statusCode, text: await res.body.text() };
  }

  async function reloads(result: 'ok' | 'error'): Promise<number> {
    const text = await (await request(`${replica.statusUrl}/metrics`)).body.text();
    return metricValue(text, `limitswitch_config_reloads_total{result="${result}"}`);
  }

  test('a good file: kept zones keep their state, a resized zone starts afresh, new settings apply', async () => {
    assert.deepEqual(await statuses('/kept', 3), [200, 200, 503]);
    assert.deepEqual(await statuses('/resized', 3), [200, 200, 503]);
    assert.equal((await get('/menu')).status, 404);
    assert.equal((await request(`http://127.0.0.1:${dropped}/`)).statusCode, 200);

    dir.write(
      'nginx.conf',
      config(
        listen,
        upstream.port,
        '2m',
        [
          '        location = /menu { return 200 "reloaded\\n"; }',
          '        set_real_ip_from 127.0.0.1;',
          '        real_ip_header X-Forwarded-For;',
        ].join('\n'),
        added,
      ),
    );
    replica.process.signal('SIGHUP');
    await replica.process.waitForLog('configuration reloaded');

    // Right after the reload: the client that was over its burst in "kept" is still over it.
    assert.deepEqual(await statuses('/kept', 2), [503, 503]);
    assert.deepEqual(await statuses('/resized', 3), [200, 200, 503]);
    assert.deepEqual(await get('/menu'), { status: 200, text: 'reloaded\n' });
    // New realip settings: on a new connection, X-Forwarded-For from 127.0.0.1 now names the client.
    const client = new Client(base);
    try {
      const other = await client.request({
        method: 'GET',
        path: '/kept',
        headers: { 'x-forwarded-for': '198.51.100.1' },
      });
      await other.body.dump();
      assert.equal(other.statusCode, 200);
    } finally {
      await client.close();
    }
    // The second server moved: its old port is closed, the new one serves.
    await waitFor(() => connectionRefused(dropped), { message: 'the dropped port to close' });
    await waitFor(
      () =>
        request(`http://127.0.0.1:${added}/`).then(
          (res) => res.body.text().then((text) => text === 'second\n'),
          () => false,
        ),
      { intervalMs: 50, message: 'the added port to serve' },
    );
    assert.equal(await reloads('ok'), 1);
    assert.equal(await reloads('error'), 0);
  });

  test('a bad file: the error with file:line in the error log, the old configuration kept', async () => {
    const good = dir.read('nginx.conf');
    // Line 4 of the file gets a directive nginx does not know.
    const lines = good.split('\n');
    lines.splice(3, 0, '    limit_req_zonez $binary_remote_addr zone=typo:1m rate=1r/s;');
    dir.write('nginx.conf', lines.join('\n'));
    replica.process.signal('SIGHUP');
    await replica.process.waitForLog('reload failed; the previous configuration stays in force');

    const pid = replica.process.pid;
    const expected = new RegExp(
      `^\\d{4}/\\d{2}/\\d{2} \\d{2}:\\d{2}:\\d{2} \\[emerg\\] ${pid}#${pid}: unknown directive "limit_req_zonez" in ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:4$`,
      'm',
    );
    await waitFor(() => expected.test(replica.process.stderr), { message: 'the [emerg] line' });
    assert.deepEqual(await get('/menu'), { status: 200, text: 'reloaded\n' });
    assert.deepEqual(await statuses('/kept', 1), [503]);
    assert.equal(await reloads('error'), 1);
    assert.equal(await reloads('ok'), 1);

    // Fixed again, the next SIGHUP applies it.
    dir.write('nginx.conf', good.replace('"reloaded\\n"', '"fixed\\n"'));
    replica.process.signal('SIGHUP');
    await waitFor(async () => (await reloads('ok')) === 2, { intervalMs: 50, message: 'the second reload' });
    assert.deepEqual(await get('/menu'), { status: 200, text: 'fixed\n' });
    assert.deepEqual(await statuses('/kept', 1), [503]);
  });
});
