/**
 * The data path's fault boundary, shown on real replica processes: a throw injected into each kind of
 * data path callback (a client socket's read, a TLS handshake, an HTTP/2 session, an upstream read, a
 * timer) ends only the connection it served. The process answers the next request, writes nginx's
 * `[alert]` line with the cause, and counts the fault.
 */
import assert from 'node:assert/strict';
import { connect as h2Connect } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import {
  freePorts,
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { rawExchange, responseCount, ScriptedUpstream } from '../helpers/raw-peers.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const pki = new TestPki();
const cert = pki.server('cafe', ['cafe.example.com']);
const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nup\n';

interface Ports {
  readonly plain: number;
  readonly tls: number;
  readonly h2c: number;
}

/** A replica whose `kind` callbacks throw once (LIMITSWITCH_FAILPOINTS), in front of `upstream`. */
async function replicaWithFailpoint(
  dir: TempDir,
  kind: string,
  upstream: ScriptedUpstream,
): Promise<{ run: ReplicaRun; ports: Ports }> {
  // A port found free can be taken by a test beside this one before the replica binds it: again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWithFailpoint(dir, kind, upstream);
    } catch (err) {
      if (attempt === 3 || !String(err).includes('Address already in use')) throw err;
    }
  }
}

async function startWithFailpoint(
  dir: TempDir,
  kind: string,
  upstream: ScriptedUpstream,
): Promise<{ run: ReplicaRun; ports: Ports }> {
  const [plain, tls, h2c] = await freePorts(3);
  const file = dir.write(
    `${kind}.conf`,
    `events {}
http {
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
    server {
        listen ${plain};
        location /delayed {
            limit_req zone=one burst=5;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location / { proxy_pass http://127.0.0.1:${upstream.port}; }
    }
    server {
        listen ${tls} ssl;
        ssl_certificate ${cert.cert};
        ssl_certificate_key ${cert.key};
        location / { return 200 "tls\\n"; }
    }
    server {
        listen ${h2c} http2;
        location / { return 200 "h2\\n"; }
    }
}
`,
  );
  const run = await startReplica(file, [], { env: { LIMITSWITCH_FAILPOINTS: kind } });
  return {
    run,
    ports: { plain: run.ports[String(plain)]!, tls: run.ports[String(tls)]!, h2c: run.ports[String(h2c)]! },
  };
}

function get(port: number, path: string) {
  return rawExchange(port, [`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`], {
    until: (text) => responseCount(text) === 1,
  });
}

function tlsAnswer(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      port,
      host: '127.0.0.1',
      servername: 'cafe.example.com',
      rejectUnauthorized: false,
    });
    let text = '';
    socket.on('secureConnect', () => socket.write('GET / HTTP/1.1\r\nHost: cafe.example.com\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (responseCount(text) === 1) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => resolve(text));
  });
}

function h2Answer(port: number): Promise<string> {
  return new Promise((resolve) => {
    const session = h2Connect(`http://127.0.0.1:${port}`);
    session.on('error', () => resolve('session error'));
    session.on('close', () => resolve('session closed'));
    const stream = session.request({ ':path': '/', ':authority': 'cafe.example.com' });
    let body = '';
    stream.on('response', (headers) => {
      body += `${headers[':status']} `;
    });
    stream.on('data', (chunk: Buffer) => {
      body += chunk.toString('latin1');
    });
    stream.on('end', () => {
      session.close();
      resolve(body);
    });
    stream.on('error', () => resolve('stream error'));
  });
}

/** The alert line, the metric, and the process still running. */
async function reported(run: ReplicaRun, kind: string): Promise<void> {
  assert.equal(run.process.child.exitCode, null, run.process.output());
  assert.match(
    run.process.stderr,
    new RegExp(
      `\\[alert\\] \\d+#\\d+: (\\*\\d+ )?data path fault in a ${kind} callback: Error: failpoint ${kind} at `,
    ),
    run.process.output(),
  );
  const metrics = await (await fetch(`${run.statusUrl}/metrics`)).text();
  assert.equal(metricValue(metrics, `limitswitch_data_path_faults_total{callback="${kind}"}`), 1);
}

describe('the data path fault boundary: a throw ends its connection, not the process', () => {
  const dir = new TempDir();
  let upstream: ScriptedUpstream;

  before(async () => {
    upstream = await ScriptedUpstream.start(() => OK);
  });

  after(async () => {
    await stopAll();
    await upstream.close();
    dir.remove();
    pki.remove();
  });

  test('a client socket read', async () => {
    const { run, ports } = await replicaWithFailpoint(dir, 'client', upstream);
    const first = await get(ports.plain, '/');
    assert.equal(first.ended, 'closed');
    assert.equal(first.text, '');
    assert.match((await get(ports.plain, '/')).text, /^HTTP\/1\.1 200 OK\r\n/);
    await reported(run, 'client');
  });

  test('a TLS handshake', async () => {
    const { run, ports } = await replicaWithFailpoint(dir, 'tls', upstream);
    assert.equal(await tlsAnswer(ports.tls), '');
    assert.match(await tlsAnswer(ports.tls), /^HTTP\/1\.1 200 OK\r\n[\s\S]*tls\n$/);
    await reported(run, 'tls');
  });

  test('an HTTP/2 session', async () => {
    const { run, ports } = await replicaWithFailpoint(dir, 'h2', upstream);
    assert.notEqual(await h2Answer(ports.h2c), '200 h2\n');
    assert.equal(await h2Answer(ports.h2c), '200 h2\n');
    await reported(run, 'h2');
  });

  test('an upstream read', async () => {
    const { run, ports } = await replicaWithFailpoint(dir, 'upstream', upstream);
    const first = await get(ports.plain, '/');
    assert.equal(first.ended, 'closed');
    assert.doesNotMatch(first.text, /200 OK/);
    assert.match((await get(ports.plain, '/')).text, /^HTTP\/1\.1 200 OK\r\n/);
    await reported(run, 'upstream');
  });

  test('a timer (a delayed request)', async () => {
    const { run, ports } = await replicaWithFailpoint(dir, 'timer', upstream);
    assert.match((await get(ports.plain, '/delayed')).text, /^HTTP\/1\.1 200 OK\r\n/);
    // the second within the second is held by limit_req's delay: its timer throws
    const held = await get(ports.plain, '/delayed');
    assert.equal(held.ended, 'closed');
    assert.equal(held.text, '');
    assert.match((await get(ports.plain, '/')).text, /^HTTP\/1\.1 200 OK\r\n/);
    await reported(run, 'timer');
  });
});
