/**
 * A certificate changes without a restart: new files and a SIGHUP, and the next handshake presents
 * the new certificate while a connection made before keeps working with the one it was made with; no
 * request fails across the swap. A bad certificate is refused by the reload (in nginx's words) and
 * the one in force stays.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { after, before, describe, test } from 'node:test';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../../helpers/limitswitch-process.ts';
import { TestPki } from '../../helpers/tls-certs.ts';
import { fingerprintedGet } from '../../helpers/tls-client.ts';

const pki = new TestPki();
const v1 = pki.server('v1', ['cafe.example.com']);
const v2 = pki.server('v2', ['cafe.example.com']);

const get = (port: number, agent: Agent | false) =>
  fingerprintedGet(port, { path: '/', ca: pki.read(pki.ca.cert), agent });

const fingerprint = (cert: string): string => new X509Certificate(pki.read(cert)).fingerprint256;

describe('certificate swap: files and SIGHUP', () => {
  const dir = new TempDir();
  let replica: ReplicaRun;
  let port: number;
  let certFile: string;
  let keyFile: string;

  before(async () => {
    const [listen] = await freePorts(1);
    certFile = dir.file('cafe.crt');
    keyFile = dir.file('cafe.key');
    copyFileSync(v1.cert, certFile);
    copyFileSync(v1.key, keyFile);
    const file = dir.write(
      'nginx.conf',
      `events {}
http {
    server {
        listen ${listen} ssl;
        server_name cafe.example.com;
        ssl_certificate cafe.crt;
        ssl_certificate_key cafe.key;
        location / { return 200 "cafe\\n"; }
    }
}
`,
    );
    replica = await startReplica(file);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    dir.remove();
    pki.remove();
  });

  test('new handshakes get the new certificate, an open connection keeps its own, nothing fails', async () => {
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    const before = await get(port, kept);
    assert.equal(before.fingerprint, fingerprint(v1.cert));

    // requests on new connections all through the swap
    let running = true;
    const failures: unknown[] = [];
    const fingerprints = new Set<string>();
    const load = (async () => {
      while (running) {
        try {
          const seen = await get(port, false);
          if (seen.status !== 200) failures.push(seen.status);
          fingerprints.add(seen.fingerprint);
        } catch (err) {
          failures.push(err);
        }
      }
    })();

    try {
      copyFileSync(v2.cert, certFile);
      copyFileSync(v2.key, keyFile);
      replica.process.signal('SIGHUP');
      await replica.process.waitForLog('configuration reloaded');

      const fresh = await get(port, false);
      assert.equal(fresh.fingerprint, fingerprint(v2.cert));
      const again = await get(port, kept);
      assert.equal(again.localPort, before.localPort, 'the kept connection is the same one');
      assert.equal(again.fingerprint, fingerprint(v1.cert));
      assert.equal(again.status, 200);

      // a bad certificate: refused, the new one stays
      writeFileSync(certFile, 'not a certificate\n');
      replica.process.signal('SIGHUP');
      await replica.process.waitForLog('reload failed; the previous configuration stays in force');
      assert.equal((await get(port, false)).fingerprint, fingerprint(v2.cert));
    } finally {
      running = false;
      await load;
    }
    kept.destroy();
    assert.deepEqual(failures, []);
    // the load ran across the swap: it saw the new certificate, and only known ones
    assert.ok(fingerprints.has(fingerprint(v2.cert)));
    for (const seen of fingerprints) assert.ok([fingerprint(v1.cert), fingerprint(v2.cert)].includes(seen));
  });
});
