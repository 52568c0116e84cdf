/** Small builders for the Kubernetes objects the k8s tests feed to the translator and the fake API server. */
import type { ConfigMap, EndpointSlice, Ingress, Secret, Service } from '../../src/k8s/objects.ts';

export interface PathSpec {
  readonly path: string;
  readonly type?: string;
  readonly svc: string;
  readonly port: number | string;
}

export interface IngressSpec {
  readonly ns?: string;
  readonly annotations?: Record<string, string>;
  readonly className?: string;
  /** Seconds after 2024-01-01T00:00:00Z: "the oldest wins" tests order objects by this. */
  readonly created?: number;
  readonly uid?: string;
  readonly rv?: string;
  readonly rules?: readonly { readonly host?: string; readonly paths?: readonly PathSpec[] }[];
  readonly tls?: readonly { readonly hosts: string[]; readonly secretName?: string }[];
  readonly defaultBackend?: { readonly svc: string; readonly port: number | string };
}

function backend(svc: string, port: number | string) {
  return { service: { name: svc, port: typeof port === 'number' ? { number: port } : { name: port } } };
}

export function ingress(name: string, spec: IngressSpec = {}): Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: spec.ns ?? 'default',
      uid: spec.uid ?? `uid-${name}`,
      resourceVersion: spec.rv ?? '1',
      creationTimestamp: new Date(Date.UTC(2024, 0, 1) + (spec.created ?? 0) * 1000).toISOString(),
      annotations: spec.annotations ?? {},
    },
    spec: {
      ...(spec.className ? { ingressClassName: spec.className } : {}),
      ...(spec.defaultBackend
        ? { defaultBackend: backend(spec.defaultBackend.svc, spec.defaultBackend.port) }
        : {}),
      ...(spec.tls ? { tls: spec.tls.map((t) => ({ ...t })) } : {}),
      rules: (spec.rules ?? []).map((r) => ({
        ...(r.host !== undefined ? { host: r.host } : {}),
        ...(r.paths
          ? {
              http: {
                paths: r.paths.map((p) => ({
                  path: p.path,
                  pathType: p.type ?? 'Prefix',
                  backend: backend(p.svc, p.port),
                })),
              },
            }
          : {}),
      })),
    },
  };
}

export function service(name: string, ports: { name?: string; port: number }[], ns = 'default'): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, uid: `uid-svc-${name}`, resourceVersion: '1' },
    spec: { type: 'ClusterIP', ports: ports.map((p) => ({ ...p, targetPort: p.port, protocol: 'TCP' })) },
  };
}

export function endpointSlice(
  svc: string,
  ports: { name?: string; port: number }[],
  endpoints: { ip: string; ready?: boolean }[],
  opts: { ns?: string; name?: string; rv?: string } = {},
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: opts.name ?? `${svc}-abcde`,
      namespace: opts.ns ?? 'default',
      uid: `uid-es-${opts.name ?? svc}`,
      resourceVersion: opts.rv ?? '1',
      labels: { 'kubernetes.io/service-name': svc },
    },
    addressType: endpoints.some((e) => e.ip.includes(':')) ? 'IPv6' : 'IPv4',
    ports: ports.map((p) => ({ name: p.name ?? '', port: p.port, protocol: 'TCP' })),
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready ?? true } })),
  };
}

export function configMap(
  name: string,
  data: Record<string, string>,
  ns = 'limitswitch',
  rv = '1',
): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, uid: `uid-cm-${name}`, resourceVersion: rv },
    data,
  };
}

/**
 * The `proxy_set_header` lines NIC's template writes in every proxied location, before `proxy_pass` —
 * written out from the template here rather than imported, so that the render is checked against it.
 */
export const NIC_PROXY_HEADERS = [
  'proxy_set_header Host $host;',
  'proxy_set_header X-Real-IP $remote_addr;',
  'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
  'proxy_set_header X-Forwarded-Host $host;',
  'proxy_set_header X-Forwarded-Port $server_port;',
  'proxy_set_header X-Forwarded-Proto $scheme;',
] as const;

/** The lines of the `location PATH { … }` block (without the braces), trimmed; null when absent. */
export function locationBlock(text: string, header: string): string[] | null {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `${header} {`);
  if (start === -1) return null;
  const out: string[] = [];
  let depth = 1;
  for (let i = start + 1; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t.endsWith('{')) depth++;
    if (t === '}') depth--;
    if (depth === 0) return out;
    out.push(t);
  }
  return null;
}

/** The lines of the `server { … server_name HOST; … }` block, trimmed. */
export function serverBlock(text: string, host: string): string[] | null {
  const blocks = text.split(/\n {4}server \{\n/).slice(1);
  for (const b of blocks) {
    const body = b.split('\n    }\n')[0]!;
    const lines = body.split('\n').map((l) => l.trim());
    if (lines.includes(`server_name ${host};`)) return lines;
  }
  return null;
}

/** A `kubernetes.io/tls` Secret from PEM text. */
export function tlsSecret(name: string, pem: { cert: string; key: string }, ns = 'default'): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace: ns },
    data: {
      'tls.crt': Buffer.from(pem.cert).toString('base64'),
      'tls.key': Buffer.from(pem.key).toString('base64'),
    },
  };
}
