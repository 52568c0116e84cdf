/**
 * The oracle's own machinery: nginx start/stop/cleanup, the timeline player, and the assumptions the
 * conformance cases rest on (pipelined requests share nginx's millisecond; 444 reads as "closed").
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { defaultFiles } from '../helpers/conformance-case.ts';
import { startNginx } from '../helpers/nginx.ts';
import { simulateInput } from '../helpers/simulate.ts';
import { groupConnections, parseAccessLog, runTimeline } from '../helpers/timeline.ts';

const http = (port: number) => `
    limit_req_zone $binary_remote_addr zone=z:1m rate=1r/m;
    server {
        listen 127.0.0.1:${port};
        location / { limit_req zone=z burst=2 nodelay; }
        location /drop { limit_req zone=z; limit_req_status 444; }
    }
`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('startNginx serves static files and stop() ends the process and removes the prefix', async () => {
  const nginx = await startNginx({ http, files: { 'a.html': 'hello' } });
  try {
    assert.ok(alive(nginx.pid));
    const [seen] = await runTimeline(nginx.port, [{ at: 0, addr: '10.9.0.1', uri: '/a.html' }]);
    assert.deepEqual(seen && { code: seen.code, status: seen.limitReqStatus, bytes: seen.bodyBytes }, {
      code: 200,
      status: 'PASSED',
      bytes: 5,
    });
  } finally {
    await nginx.stop();
  }
  assert.equal(alive(nginx.pid), false);
  assert.equal(existsSync(nginx.prefix), false);
  assert.match(nginx.errorLog(), /\[notice\] \d+#\d+: using the "epoll" event method/);
});

test('startNginx rejects a bad config with nginx’s own message and leaves nothing behind', async () => {
  await assert.rejects(startNginx({ http: () => 'bogus_directive on;' }), (err: Error) => {
    assert.match(err.message, /^nginx exited during start-up:\n/);
    const match = /\[emerg\] \d+#\d+: unknown directive "bogus_directive" in (.*)\/nginx\.conf:25\n$/.exec(
      err.message,
    );
    assert.ok(match?.[1], err.message);
    assert.equal(existsSync(match[1]), false, 'the prefix is removed');
    return true;
  });
});

test('pipelined requests reach nginx in the same millisecond; 444 reads as closed', async () => {
  const nginx = await startNginx({ http, files: { 'a.html': 'x', drop: 'x' } });
  try {
    const seen = await runTimeline(nginx.port, [
      { at: 0, addr: '10.9.0.2', uri: '/a.html' },
      { at: 0, addr: '10.9.0.2', uri: '/a.html', pipelined: true },
      { at: 0, addr: '10.9.0.2', uri: '/a.html', pipelined: true },
      { at: 0, addr: '10.9.0.2', uri: '/drop', pipelined: true },
      { at: 60, addr: '10.9.0.3', uri: '/a.html' },
    ]);
    await nginx.stop();
    assert.deepEqual(
      seen.map((s) => [s.code, s.limitReqStatus]),
      [
        [200, 'PASSED'],
        [200, 'PASSED'],
        [200, 'PASSED'],
        ['closed', null],
        [200, 'PASSED'],
      ],
    );
    const log = parseAccessLog(nginx.accessLog());
    const starts = [0, 1, 2, 3].map((i) => log.get(i)?.startMs);
    assert.equal(new Set(starts).size, 1, `pipelined requests started at ${starts.join(', ')}`);
    assert.deepEqual([log.get(3)?.status, log.get(3)?.limitReqStatus], [444, 'REJECTED']);
    assert.ok((log.get(4)?.startMs ?? 0) > (log.get(0)?.startMs ?? Number.POSITIVE_INFINITY));
  } finally {
    await nginx.stop();
  }
});

test('timeline and file helpers refuse malformed schedules with a clear message', () => {
  assert.throws(() => groupConnections([{ at: 0, addr: 'a', uri: '/', pipelined: true }]), {
    message: 'request #0 is pipelined but has no predecessor',
  });
  assert.throws(
    () =>
      groupConnections([
        { at: 0, addr: 'a', uri: '/' },
        { at: 5, addr: 'a', uri: '/', pipelined: true },
      ]),
    { message: 'request #1 is pipelined but at 5 ms, not 0 ms' },
  );
  assert.throws(
    () =>
      groupConnections([
        { at: 10, addr: 'a', uri: '/' },
        { at: 5, addr: 'a', uri: '/' },
      ]),
    { message: 'request #1 at 5 ms is scheduled before its predecessor' },
  );
  assert.throws(
    () =>
      defaultFiles([
        { at: 0, addr: 'a', uri: '/reject' },
        { at: 0, addr: 'a', uri: '/reject/off' },
      ]),
    { message: 'timeline URIs need "reject" as both a file and a directory (reject/off)' },
  );
  assert.deepEqual(Object.keys(defaultFiles([{ at: 0, addr: 'a', uri: '/d/?x=1' }])), ['d/index.html']);
});

test('simulateInput puts the timeline on the simulated clock with the nginx port', () => {
  assert.deepEqual(
    simulateInput(
      [{ at: 250, addr: '10.0.0.1', uri: '/t?a=1', host: 'h', headers: { 'X-Switch': '1' } }],
      8080,
    ),
    [
      {
        t: 1250,
        addr: '10.0.0.1',
        host: 'h',
        uri: '/t?a=1',
        port: 8080,
        method: 'GET',
        headers: { 'X-Switch': '1' },
      },
    ],
  );
});
