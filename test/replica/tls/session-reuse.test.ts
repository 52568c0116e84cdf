/**
 * TLS session resumption against real nginx, address by address (the session settings are the
 * address's default server's): tickets alone (the default), tickets and a cache, a `shared` or
 * `builtin` cache with tickets off — which in TLSv1.3 resumes by a stateful ticket, the session
 * found in the cache by the ticket the client offers — and no cache (`none`, `off`) with tickets off.
 * A client connects, keeps the session the server gave it, and connects again offering it;
 * `$ssl_session_reused` says whether the server resumed it. TLSv1.3 and TLSv1.2 alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePorts } from '../../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../../helpers/nginx.ts';
import { TestPki } from '../../helpers/tls-certs.ts';
import { getOfferingSession as get } from '../../helpers/tls-client.ts';

const pki = new TestPki();
const localhost = pki.server('localhost', ['localhost']);

const VARIANTS = [
  ['tickets (the default)', ''],
  ['tickets and a shared cache', 'ssl_session_cache shared:SSL:1m; ssl_session_tickets on;'],
  ['a shared cache, tickets off', 'ssl_session_cache shared:SSL:1m; ssl_session_tickets off;'],
  ['a builtin cache, tickets off', 'ssl_session_cache builtin; ssl_session_tickets off;'],
  ['a builtin cache of 1000, tickets off', 'ssl_session_cache builtin:1000; ssl_session_tickets off;'],
  ['cache none, tickets off', 'ssl_session_cache none; ssl_session_tickets off;'],
  ['cache off, tickets off', 'ssl_session_cache off; ssl_session_tickets off;'],
] as const;

function body(ports: readonly number[]): string {
  return `
    # nginx 1.22 leaves TLSv1.3 out of its default (1.23.4 and the replica have it)
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_certificate ${localhost.cert};
    ssl_certificate_key ${localhost.key};
${VARIANTS.map(
  ([, directives], i) => `
    server {
        listen 127.0.0.1:${ports[i]} ssl;
        server_name localhost;
        ${directives}
        location / { return 200 "reused=$ssl_session_reused $ssl_protocol"; }
    }`,
).join('')}
`;
}

/** Per variant and protocol: the answer to the second connection, which offered the first's session. */
async function resumptions(portOf: (i: number) => number): Promise<string[]> {
  const seen: string[] = [];
  for (const version of ['TLSv1.3', 'TLSv1.2'] as const) {
    for (const [i, [name]] of VARIANTS.entries()) {
      const first = await get(portOf(i), version);
      // `ssl_session_cache off` in TLSv1.2: nginx hands out no session ID at all, the replica one it
      // never resumes (node:tls sets no cache mode): the client has something to offer, in vain
      const second = await get(portOf(i), version, first.session ?? undefined);
      seen.push(`${name}, ${version}: ${second.body}`);
    }
  }
  return seen;
}

describe('TLS session resumption: replica vs nginx', () => {
  const dir = new TempDir();
  let nginx: RunningNginx;
  let nginxPorts: number[];
  let replica: ReplicaRun;
  let ports: number[];

  before(async () => {
    const extra = await freePorts(VARIANTS.length - 1);
    nginx = await startNginx({ http: (port) => body([port, ...extra]) });
    nginxPorts = [nginx.port, ...extra];
    ports = await freePorts(VARIANTS.length);
    const file = dir.write('nginx.conf', `events {}\nhttp {\n${body(ports)}\n}\n`);
    replica = await startReplica(file, [], { status: false });
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    dir.remove();
    pki.remove();
  });

  test('each address resumes (or not) as nginx does, in TLSv1.3 and TLSv1.2', async () => {
    const fromNginx = await resumptions((i) => nginxPorts[i]!);
    const fromReplica = await resumptions((i) => replica.ports[String(ports[i])]!);
    assert.deepEqual(fromReplica, fromNginx);
    // what nginx-tests' ssl_session_reuse.t expects of nginx itself
    const reused = fromNginx.map((line) => line.includes('reused=r'));
    assert.deepEqual(reused, [
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
