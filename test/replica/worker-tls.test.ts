/**
 * TLS with `worker_processes 2`: a session ticket one worker thread issued resumes at the other, as
 * nginx's workers share their TLS contexts' ticket keys, and a session one worker put in
 * `ssl_session_cache shared` resumes at the other, as nginx's workers share that zone. Each new
 * connection goes to either worker (SO_REUSEPORT), so with keys or a cache of its own per worker about
 * half the resumptions would fail. Where this Node.js cannot run workers, the one thread resumes them
 * all too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Replica } from '../../src/replica/replica.ts';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { TestPki } from '../helpers/tls-certs.ts';
import { getOfferingSession } from '../helpers/tls-client.ts';

describe('replica: TLS session tickets across worker threads', () => {
  const pki = new TestPki();
  const localhost = pki.server('localhost', ['localhost']);
  let replica: Replica;
  let port: number;
  let cachePort: number;

  before(async () => {
    ({ replica, port } = await startInProcessReplica(
      'worker-tls',
      `worker_processes 2;
events {}
http {
    server {
        listen 80 ssl;
        ssl_certificate ${localhost.cert};
        ssl_certificate_key ${localhost.key};
        location / { return 200 "reused=$ssl_session_reused"; }
    }
    server {
        listen 81 ssl;
        ssl_certificate ${localhost.cert};
        ssl_certificate_key ${localhost.key};
        ssl_session_cache shared:SSL:1m;
        ssl_session_tickets off;
        location / { return 200 "reused=$ssl_session_reused"; }
    }
}
`,
      {
        portMap: new Map([
          [80, 0],
          [81, 0],
        ]),
      },
    ));
    cachePort = replica.ports.get(81)!;
  });

  after(async () => {
    await replica?.close();
    pki.remove();
  });

  for (const [what, version] of [
    ['a ticket', 'TLSv1.3'],
    ['a ticket', 'TLSv1.2'],
    ['a session in the shared cache', 'TLSv1.3'],
    ['a session in the shared cache', 'TLSv1.2'],
  ] as const) {
    test(`${version}: ${what} resumes on every new connection, whichever worker takes it`, async () => {
      assert.equal(replica.workerPool?.workers.length ?? 1, reusePortSupported() ? 2 : 1);
      const at = what === 'a ticket' ? port : cachePort;
      const first = await getOfferingSession(at, version);
      assert.equal(first.body, 'reused=.');
      assert.ok(first.session !== null);
      // twelve connections: all on the issuing worker would be 1 in 4096
      const again = await Promise.all(
        Array.from({ length: 12 }, () => getOfferingSession(at, version, first.session!)),
      );
      assert.deepEqual(
        again.map((answer) => answer.body),
        Array(12).fill('reused=r'),
      );
    });
  }
});
