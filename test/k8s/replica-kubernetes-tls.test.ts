/**
 * Ingress `tls:` on a `limitswitch replica --kubernetes` against the fake API server: the host is
 * served with TLS from its `kubernetes.io/tls` Secret, plain HTTP to it is redirected (NIC's
 * ssl-redirect), a Secret update swaps the certificate live — new handshakes get the new one, an open
 * connection keeps its own, no request fails — and a Secret that turns bad is reported on the Secret
 * while the last good certificate stays in use.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { Agent } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { FakeKubeApiServer } from '../helpers/fake-kube-apiserver.ts';
import { freePorts } from '../helpers/free-port.ts';
import { kubeconfig } from '../helpers/kubeconfig.ts';
import { LimitswitchProcess, TempDir } from '../helpers/limitswitch-process.ts';
import { TestPki } from '../helpers/tls-certs.ts';
import { fingerprintedGet } from '../helpers/tls-client.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';
import { endpointSlice, ingress, service, tlsSecret } from './builders.ts';

const pki = new TestPki();
const v1 = pki.server('v1', ['cafe.example.com']);
const v2 = pki.server('v2', ['cafe.example.com']);
const pem = (files: { cert: string; key: string }) => ({
  cert: pki.read(files.cert),
  key: pki.read(files.key),
});
const fingerprint = (files: { cert: string }) => new X509Certificate(pki.read(files.cert)).fingerprint256;

const httpsGet = (port: number, agent: Agent | false) =>
  fingerprintedGet(port, { path: '/tea', ca: pki.read(pki.ca.cert), agent });

describe('replica --kubernetes: Ingress TLS from Secrets, swapped live', { timeout: 120_000 }, () => {
  const dir = new TempDir();
  let api: FakeKubeApiServer;
  let upstream: TestUpstream;
  let replica: LimitswitchProcess;
  let httpPort: number;
  let tlsPort: number;

  before(async () => {
    upstream = await startUpstream((_req, res) => res.end('tea'));
    api = await FakeKubeApiServer.start();
    api.apply(service('tea-svc', [{ port: 80 }]));
    api.apply(endpointSlice('tea-svc', [{ port: upstream.port }], [{ ip: '127.0.0.1' }]));
    api.apply(tlsSecret('cafe-secret', pem(v1)));
    api.apply(
      ingress('cafe', {
        className: 'limitswitch',
        tls: [{ hosts: ['cafe.example.com'], secretName: 'cafe-secret' }],
        rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
      }),
    );
    [httpPort, tlsPort] = (await freePorts(2)) as [number, number];
    replica = new LimitswitchProcess('replica', [
      '--kubernetes',
      '--kubeconfig',
      dir.write('kubeconfig.yaml', kubeconfig(api.url)),
      '--listen-port',
      String(httpPort),
      '--tls-listen-port',
      String(tlsPort),
      '--id',
      'replica-tls',
    ]);
    const listening = await replica.waitForLog('replica listening');
    assert.deepEqual(listening.listen, [`0.0.0.0:${httpPort}`, `0.0.0.0:${tlsPort}`]);
  });

  after(async () => {
    await replica?.stop();
    await Promise.all([api?.close(), upstream?.close()]);
    dir.remove();
    pki.remove();
  });

  test('the host is served with its Secret; plain HTTP to it is redirected to https', async () => {
    const seen = await httpsGet(tlsPort, false);
    assert.deepEqual([seen.status, seen.text, seen.fingerprint], [200, 'tea', fingerprint(v1)]);
    const plain = await request(`http://127.0.0.1:${httpPort}/tea?x=1`, {
      headers: { host: 'cafe.example.com' },
    });
    await plain.body.dump();
    assert.equal(plain.statusCode, 301);
    assert.equal(plain.headers.location, 'https://cafe.example.com/tea?x=1');
  });

  test('a Secret update: new handshakes get the new certificate, nothing fails, an open connection keeps its own', async () => {
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await httpsGet(tlsPort, kept);
    let running = true;
    const failures: unknown[] = [];
    const load = (async () => {
      while (running) {
        try {
          const seen = await httpsGet(tlsPort, false);
          if (seen.status !== 200) failures.push(seen.status);
        } catch (err) {
          failures.push(err);
        }
      }
    })();
    try {
      api.apply(tlsSecret('cafe-secret', pem(v2)));
      await waitFor(async () => (await httpsGet(tlsPort, false)).fingerprint === fingerprint(v2), {
        timeoutMs: 30_000,
        message: 'the new certificate on a new connection',
      });
      const again = await httpsGet(tlsPort, kept);
      assert.equal(again.localPort, first.localPort, 'the kept connection is the same one');
      assert.deepEqual([again.status, again.fingerprint], [200, fingerprint(v1)]);
    } finally {
      running = false;
      await load;
      kept.destroy();
    }
    assert.deepEqual(failures, []);
  });

  test('a Secret that turns bad is reported on the Secret; the last good certificate stays', async () => {
    api.apply(tlsSecret('cafe-secret', { cert: pki.read(v1.cert), key: pki.read(v2.key) }));
    const line = await replica.waitForLog(
      'Secret default/cafe-secret: data: invalid certificate or key: error:05800074:x509 certificate routines::key values mismatch; the last good version is still served',
    );
    assert.equal(line.kind, 'Secret');
    // and as a Kubernetes Event on the Secret
    const onSecret = (e: Record<string, unknown>) => {
      const involved = e.involvedObject as { kind?: string; name?: string } | undefined;
      return involved?.kind === 'Secret' && involved.name === 'cafe-secret';
    };
    await waitFor(() => api.postedEvents.some(onSecret), { message: 'an Event on the Secret' });
    const seen = await httpsGet(tlsPort, false);
    assert.deepEqual([seen.status, seen.fingerprint], [200, fingerprint(v2)]);
  });
});
