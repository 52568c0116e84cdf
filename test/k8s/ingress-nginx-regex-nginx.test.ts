/**
 * The regex Ingress of ingress-nginx's documentation (`use-regex`, `rewrite-target: /$2`, path
 * `/v1(/|$)(.*)`, `limit-rpm`), rendered by limitswitch and run by a replica, against real nginx running
 * what ingress-nginx's own template writes for it (nginx.tmpl with buildLocation/buildProxyPass:
 * `location ~* "^<path>"`, `rewrite "(?i)<path>" <target> break;`, every location of the host a regex
 * one, and the target rewrites every location of the Ingress): the same statuses, the same URI at
 * the backend, the same limiting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { Ingress } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from '../replica/http/harness.ts';
import { endpointSlice, ingress, service } from './builders.ts';

const ING = 'nginx.ingress.kubernetes.io/';

function apiIngress(): Ingress {
  return ingress('api', {
    annotations: {
      [`${ING}use-regex`]: 'true',
      [`${ING}rewrite-target`]: '/$2',
      [`${ING}limit-rpm`]: '1',
      [`${ING}limit-burst-multiplier`]: '4',
    },
    rules: [
      {
        host: 'api.example.com',
        paths: [
          { path: '/v1(/|$)(.*)', type: 'ImplementationSpecific', svc: 'users', port: 8080 },
          { path: '/health', type: 'Exact', svc: 'users', port: 8080 },
        ],
      },
    ],
  });
}

/** What ingress-nginx's template writes for the Ingress (its limit lines: zone per Ingress, burst = rpm × 4). */
function ingressNginxConfig(port: number, backend: number): string {
  return `
    limit_req_status 503;
    limit_req_zone $binary_remote_addr zone=api_rpm:5m rate=1r/m;
    upstream upstream_balancer { server 127.0.0.1:${backend}; }
    server {
        listen 127.0.0.1:${port};
        server_name api.example.com;
        location ~* "^/v1(/|$)(.*)" {
            limit_req zone=api_rpm burst=4 nodelay;
            rewrite "(?i)/v1(/|$)(.*)" /$2 break;
            proxy_pass http://upstream_balancer;
        }
        location ~* "^/health" {
            limit_req zone=api_rpm burst=4 nodelay;
            rewrite "(?i)/health" /$2 break;
            proxy_pass http://upstream_balancer;
        }
    }`;
}

describe('ingress-nginx regex Ingress: limitswitch render vs ingress-nginx template on nginx', () => {
  let backend: TestUpstream;
  let nginx: RunningNginx;
  let replica: Replica;
  let replicaPort: number;

  before(async () => {
    backend = await startUpstream();
    const rendered = new ClusterTranslator({}).translate({
      ingresses: [apiIngress()],
      services: [service('users', [{ port: 8080 }])],
      endpointSlices: [endpointSlice('users', [{ port: backend.port }], [{ ip: '127.0.0.1' }])],
      configMap: null,
    });
    assert.deepEqual(rendered.problems, []);
    [nginx, { replica, port: replicaPort }] = await Promise.all([
      startNginx({ http: (port) => ingressNginxConfig(port, backend.port) }),
      startInProcessReplica('ingress-nginx-regex', rendered.text),
    ]);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), replica?.close()]);
    await backend?.close();
  });

  /** Status and the URI the backend received (null: it received nothing). */
  async function ask(port: number, target: string): Promise<[number, string | null]> {
    const res = await request(`http://127.0.0.1:${port}${target}`, { headers: { host: 'api.example.com' } });
    const text = await res.body.text();
    return [res.statusCode, res.statusCode === 200 ? (JSON.parse(text) as UpstreamRecord).url : null];
  }

  it('the same answers and backend URIs, request by request, through the limit', async () => {
    const targets = [
      '/v1/users',
      '/V1/Users?page=2',
      '/v1',
      '/v1/a%20b/../c',
      '/v1users',
      '/healthz',
      '/v1/users',
    ];
    const fromNginx: [number, string | null][] = [];
    const fromReplica: [number, string | null][] = [];
    for (const t of targets) {
      fromNginx.push(await ask(nginx.port, t));
      fromReplica.push(await ask(replicaPort, t));
    }
    assert.deepEqual(fromReplica, fromNginx);
    // what ingress-nginx's rewrite does, spelled out: the capture after /v1, the query kept; the
    // target is the whole Ingress's, so /health's location rewrites too (to "/": it has no $2)
    assert.deepEqual(fromNginx.slice(0, 3), [
      [200, '/users'],
      [200, '/Users?page=2'],
      [200, '/'],
    ]);
    assert.deepEqual(fromNginx[5], [200, '/']);
    // 1r/m with burst 4: five pass (/v1users matches no location and is not limited), then 503
    assert.deepEqual(fromNginx.at(-1), [503, null]);
    assert.deepEqual(fromNginx[4], [404, null]);
  });
});
