/**
 * Writes the Gateway API objects' status (`/status` subresource) when it differs from what the object
 * carries. Conditions keep their `lastTransitionTime` while their status stays the same, so a replica
 * that computes the same status writes nothing; every replica computes the same, so several replicas
 * writing is harmless (the first write wins, the others find nothing to change). A refused write (a
 * conflict with a newer version) is retried when the informer brings that version.
 */
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { GATEWAY_GROUP, GATEWAY_VERSION, NGF_GROUP, NGF_VERSION } from '../gateway/gateway-objects.ts';
import type { GatewayKind, StatusUpdate } from '../gateway/translate-gateway.ts';
import type { KubeObject } from '../objects.ts';

export const GATEWAY_RESOURCES: Record<GatewayKind, { group: string; version: string; plural: string }> = {
  GatewayClass: { group: GATEWAY_GROUP, version: GATEWAY_VERSION, plural: 'gatewayclasses' },
  Gateway: { group: GATEWAY_GROUP, version: GATEWAY_VERSION, plural: 'gateways' },
  HTTPRoute: { group: GATEWAY_GROUP, version: GATEWAY_VERSION, plural: 'httproutes' },
  RateLimitPolicy: { group: NGF_GROUP, version: NGF_VERSION, plural: 'ratelimitpolicies' },
};

type Json = unknown;

/** JSON with object keys sorted, so two statuses compare equal whatever order the server keeps. */
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, Json>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

type Cond = { type?: string; status?: string; lastTransitionTime?: string };

function stampConditions(next: Cond[], old: Cond[] | undefined, now: string): Cond[] {
  return next.map((c) => {
    const before = old?.find((o) => o.type === c.type);
    const time =
      before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now;
    return { ...c, lastTransitionTime: time };
  });
}

/** Sets `lastTransitionTime` on every conditions list of `next`, from the matching list of `old`. */
function stamp(
  next: Record<string, Json>,
  old: Record<string, Json> | undefined,
  now: string,
): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(next)) {
    const before = old?.[k];
    if (k === 'conditions' && Array.isArray(v)) {
      out[k] = stampConditions(v as Cond[], before as Cond[] | undefined, now);
    } else if (Array.isArray(v)) {
      // listeners by name, parents by parentRef, ancestors by ancestorRef (each with its controller)
      const id = (x: Record<string, Json>) =>
        canonical([x.name, x.parentRef, x.ancestorRef, x.controllerName]);
      const olds = Array.isArray(before) ? (before as Record<string, Json>[]) : [];
      out[k] = (v as Json[]).map((item) =>
        item !== null && typeof item === 'object' && !Array.isArray(item)
          ? stamp(
              item as Record<string, Json>,
              olds.find((o) => id(o) === id(item as Record<string, Json>)),
              now,
            )
          : item,
      );
    } else out[k] = v;
  }
  return out;
}

/** Where a refused write is said (the replica's logger). */
export interface StatusLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export class GatewayStatusWriter {
  /** Object uid → the canonical status last written for its resourceVersion. */
  private readonly written = new Map<string, { version: string; status: string }>();

  private readonly api: CustomObjectsApi;
  private readonly logger: StatusLogger | undefined;
  private readonly now: () => Date;

  constructor(api: CustomObjectsApi, logger?: StatusLogger, now: () => Date = () => new Date()) {
    this.api = api;
    this.logger = logger;
    this.now = now;
  }

  /** Writes what differs; `lookup` gives the object as last listed/watched. */
  async write(
    updates: readonly StatusUpdate[],
    lookup: (u: StatusUpdate) => KubeObject | undefined,
  ): Promise<void> {
    const now = this.now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
    // forget the objects that are gone
    const idOf = (u: StatusUpdate) => lookup(u)?.metadata?.uid ?? `${u.kind}/${u.namespace}/${u.name}`;
    const present = new Set(updates.map(idOf));
    for (const id of this.written.keys()) if (!present.has(id)) this.written.delete(id);
    await Promise.all(
      updates.map(async (u) => {
        const obj = lookup(u) as (KubeObject & { status?: Record<string, Json> }) | undefined;
        if (!obj?.metadata?.name) return;
        const status = stamp(u.status as Record<string, Json>, obj.status, now);
        const text = canonical(status);
        if (text === canonical(obj.status ?? {})) return;
        const id = obj.metadata.uid ?? `${u.kind}/${u.namespace}/${u.name}`;
        const version = obj.metadata.resourceVersion ?? '';
        const last = this.written.get(id);
        if (last && last.version === version && last.status === text) return;
        this.written.set(id, { version, status: text });
        const r = GATEWAY_RESOURCES[u.kind];
        const body = { ...obj, status };
        try {
          if (u.namespace === null)
            await this.api.replaceClusterCustomObjectStatus({ ...r, name: u.name, body });
          else
            await this.api.replaceNamespacedCustomObjectStatus({
              ...r,
              namespace: u.namespace,
              name: u.name,
              body,
            });
        } catch (err) {
          this.written.delete(id);
          const code = (err as { code?: number }).code;
          const fields = { object: `${u.namespace ?? ''}/${u.name}`, kind: u.kind, code };
          // a conflict means a newer version is on its way: the next rebuild writes again
          if (code === 409)
            this.logger?.info(
              fields,
              `${u.kind} ${u.name}: status write conflicted; retried with the newer version`,
            );
          else
            this.logger?.warn(
              fields,
              `${u.kind} ${u.name}: status not written: ${err instanceof Error ? err.message : String(err)}`,
            );
        }
      }),
    );
  }
}
