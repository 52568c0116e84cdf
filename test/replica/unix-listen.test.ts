/**
 * `listen unix:/path` on the replica: each socket its own listener with the servers that listen there,
 * its clients `unix:`, the socket file readable and writable by all while it listens and gone once the
 * listener closes (at stop, or when a reload drops it); a file already at the path fails the start, as
 * nginx's bind() does; with worker threads it is refused at `worker_processes`; limit_conn keyed by
 * `$binary_remote_addr` counts all of its clients as one, `unix:`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadConfigText } from '../../src/config/index.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { refuseUnixListenWithWorkers } from '../../src/replica/workers/worker-runtime.ts';
import { GatedUpstream } from '../helpers/gated-upstream.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { waitFor } from '../helpers/wait-for.ts';

const VARIABLES = '$remote_addr|$remote_port|$server_addr|$server_port|$binary_remote_addr';

function configOf(dir: string, withB = true): string {
  return `events {}
http {
    server { listen 80; location / { return 200 "tcp\\n"; } }
    server {
        listen unix:${dir}/a.sock;
        location / { return 200 "a ${VARIABLES}\\n"; }
        location /deny { deny unix:; }
    }
    ${withB ? `server { listen unix:${dir}/b.sock; location / { return 200 "b\\n"; } }` : ''}
}
`;
}

async function viaSocket(socketPath: string, path = '/'): Promise<string> {
  const dispatcher = new Agent({ connect: { socketPath } });
  try {
    const res = await request(`http://localhost${path}`, { dispatcher });
    return `${res.statusCode} ${(await res.body.text()).split(/\r?\n/)[0]}`;
  } finally {
    await dispatcher.close();
  }
}

describe('listen unix: on the replica', () => {
  let dir: string;
  let replica: Replica;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'limitswitch-unix-'));
    ({ replica } = await startInProcessReplica('r1', configOf(dir)));
  });

  after(async () => {
    await replica?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('each socket answers with its own server; its clients are unix:, its address unix:/path, no ports', async () => {
    assert.equal(await viaSocket(join(dir, 'a.sock')), `200 a unix:||unix:${dir}/a.sock||unix:`);
    assert.equal(await viaSocket(join(dir, 'b.sock')), '200 b');
    assert.equal(await viaSocket(join(dir, 'a.sock'), '/deny'), '403 <html>');
    assert.ok(replica.addresses().includes(`unix:${dir}/a.sock`), replica.addresses().join(' '));
    assert.deepEqual([...replica.ports.keys()], [80], 'only TCP ports have a port');
  });

  test('the socket file is readable and writable by all, as nginx leaves it', () => {
    assert.equal(statSync(join(dir, 'a.sock')).mode & 0o777, 0o666);
  });

  test('a reload that drops a socket removes its file; one that brings it back listens again', async () => {
    replica.reload(loadConfigText(configOf(dir, false), 'nginx.conf'));
    // the file goes when libuv closes the dropped listener: no event of it reaches here
    await waitFor(() => !existsSync(join(dir, 'b.sock')), { message: 'b.sock removed' });
    assert.equal(await viaSocket(join(dir, 'a.sock')), `200 a unix:||unix:${dir}/a.sock||unix:`);
    replica.reload(loadConfigText(configOf(dir), 'nginx.conf'));
    await waitFor(() => existsSync(join(dir, 'b.sock')), { message: 'b.sock back' });
    assert.equal(await viaSocket(join(dir, 'b.sock')), '200 b');
  });

  test('stopped: the socket files are gone', async () => {
    await replica.close();
    assert.equal(existsSync(join(dir, 'a.sock')), false);
    assert.equal(existsSync(join(dir, 'b.sock')), false);
  });
});

test('a file already at the path fails the start in nginx’s words, and is left where it was', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-unix-'));
  try {
    writeFileSync(join(dir, 'a.sock'), 'stale');
    await assert.rejects(
      startInProcessReplica('r2', configOf(dir, false)),
      new RegExp(`bind\\(\\) to unix:${dir}/a\\.sock failed \\(98: Address already in use\\)$`),
    );
    assert.equal(statSync(join(dir, 'a.sock')).isFile(), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('worker threads cannot share a UNIX-domain socket: refused at worker_processes', () => {
  const config = loadConfigText(
    'worker_processes 2;\nevents {}\nhttp {\n server { listen unix:/run/a.sock; }\n}\n',
    'nginx.conf',
  );
  assert.throws(
    () => refuseUnixListenWithWorkers(config, 2),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.located ===
        '"worker_processes" 2 cannot serve "listen unix:/run/a.sock" (worker threads share TCP ports only; a UNIX-domain socket is served by one worker) in nginx.conf:1',
  );
  refuseUnixListenWithWorkers(config, 1);
  const tcp = loadConfigText('worker_processes 2;\nevents {}\nhttp {\n server { listen 8080; }\n}\n', 'x');
  refuseUnixListenWithWorkers(tcp, 2);
});

test('limit_conn keyed by $binary_remote_addr: the clients of a socket are one key, unix:; a TCP client its own', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-unix-'));
  const gate = await GatedUpstream.start();
  const config = `events {}
http {
    limit_conn_zone $binary_remote_addr zone=by_addr:1m;
    server {
        listen 80;
        listen unix:${dir}/a.sock;
        location / { limit_conn by_addr 1; proxy_pass http://127.0.0.1:${gate.port}; }
    }
}
`;
  const { replica, port } = await startInProcessReplica('r3', config);
  try {
    const held = await gate.hold('/?hold', (path) => viaSocket(join(dir, 'a.sock'), path));
    assert.equal(await viaSocket(join(dir, 'a.sock'), '/second'), '503 <html>');
    const tcp = await request(`http://127.0.0.1:${port}/tcp`);
    await tcp.body.dump();
    assert.equal(tcp.statusCode, 200, 'a TCP client is another key');
    gate.release('/?hold');
    assert.equal(await held.answer, '200 ');
  } finally {
    gate.close();
    await replica.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
