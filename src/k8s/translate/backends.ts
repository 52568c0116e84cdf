/**
 * Ingress backends → upstream servers: the Service port the Ingress names (number or name), then the
 * ready endpoints of the Service's EndpointSlices on the port of the same name, as NIC does. A backend
 * without ready endpoints gets NIC's placeholder server so the config stays valid (requests fail with
 * 502 until endpoints appear).
 */
import type { EndpointSlice, Service } from '../objects.ts';
import type { NormalBackend } from './ingress-normalize.ts';

/** NIC's placeholder for an upstream with no endpoints. */
export const NO_ENDPOINTS_SERVER = '127.0.0.1:8181';

export interface BackendIndex {
  readonly services: ReadonlyMap<string, Service>;
  /** By `namespace/service-name` (the `kubernetes.io/service-name` label). */
  readonly slices: ReadonlyMap<string, readonly EndpointSlice[]>;
}

export function buildBackendIndex(
  services: readonly Service[],
  slices: readonly EndpointSlice[],
): BackendIndex {
  const svc = new Map<string, Service>();
  for (const s of services) svc.set(`${s.metadata?.namespace ?? 'default'}/${s.metadata?.name ?? ''}`, s);
  const bySvc = new Map<string, EndpointSlice[]>();
  for (const es of slices) {
    const owner = es.metadata?.labels?.['kubernetes.io/service-name'];
    if (!owner) continue;
    const key = `${es.metadata?.namespace ?? 'default'}/${owner}`;
    const list = bySvc.get(key) ?? [];
    list.push(es);
    bySvc.set(key, list);
  }
  return { services: svc, slices: bySvc };
}

export interface ResolvedBackend {
  /** `host:port` (IPv6 in brackets), sorted, deduplicated; never empty. */
  readonly servers: readonly string[];
  /** Why the placeholder is used, for a comment in the config; null when endpoints were found. */
  readonly note: string | null;
}

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export function resolveBackend(
  index: BackendIndex,
  namespace: string,
  backend: NormalBackend,
): ResolvedBackend {
  const placeholder = (note: string): ResolvedBackend => ({ servers: [NO_ENDPOINTS_SERVER], note });
  const key = `${namespace}/${backend.service}`;
  const svc = index.services.get(key);
  if (!svc) return placeholder(`Service ${key} not found`);
  const ports = svc.spec?.ports ?? [];
  const svcPort =
    typeof backend.port === 'number'
      ? ports.find((p) => p.port === backend.port)
      : ports.find((p) => p.name === backend.port);
  if (!svcPort) return placeholder(`Service ${key} has no port ${backend.port}`);
  if (svc.spec?.type === 'ExternalName' && svc.spec.externalName) {
    return { servers: [`${svc.spec.externalName}:${svcPort.port ?? backend.port}`], note: null };
  }
  const portName = svcPort.name ?? '';
  const servers = new Set<string>();
  for (const slice of index.slices.get(key) ?? []) {
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
    if (port === undefined) continue;
    for (const ep of slice.endpoints ?? []) {
      // `ready: null` means unknown, which consumers are told to treat as ready.
      if (ep.conditions?.ready === false) continue;
      // Only the first address has defined semantics (kube-proxy ignores the rest).
      const address = ep.addresses?.[0];
      if (address) servers.add(hostPort(address, port));
    }
  }
  if (servers.size === 0) return placeholder(`Service ${key} has no ready endpoints`);
  return { servers: [...servers].sort(), note: null };
}
