/**
 * The Redis key schema, the one place that names Redis keys. Every key is
 * `<prefix>:{<cluster>}:<entity>`: the `{<cluster>}` hash tag puts all of one cluster's keys in one Redis
 * Cluster slot, so each Lua script touches one slot only. Several limitswitch clusters can share one
 * Redis by choosing different cluster names (or prefixes).
 *
 * | key                        | type   | content                                                      |
 * |----------------------------|--------|--------------------------------------------------------------|
 * | `revision`                 | string | the store revision (INCR per change; absent = 0)             |
 * | `epoch`                    | string | random id of this history (set once, when absent)            |
 * | `log`                      | stream | change log, entry id `<revision>-0`, field `c` = change JSON  |
 * | `zones`                    | set    | zone names that hold keys                                    |
 * | `kv:<zone>`                | hash   | key → `{"value":…,"expireAtMs":…}`                           |
 * | `expiry`                   | zset   | `<zone>\0<key>` scored by expireAtMs (expiring keys only)    |
 * | `registry`                 | hash   | zone name → KeyvalZoneInfo JSON                              |
 * | `replicas`                 | hash   | replica id → ReplicaInfo JSON + lastHeartbeatMs              |
 * | `replicas-expiry`          | hash   | replica id → epoch ms after which it is not live             |
 * | `counters`                 | hash   | `<replica>\0<zone>\0<counter>` → integer                      |
 * | `audit`                    | list   | AuditEntry JSON, newest first, bounded                        |
 *
 * The pub/sub channel `<prefix>:{<cluster>}:changes` carries each change (with the epoch) as JSON.
 */
import { LimitswitchError } from '../shared/errors.ts';

export interface KeySchemaOptions {
  /** Key prefix. Default `limitswitch`. */
  readonly prefix?: string;
  /** Cluster name, the hash tag. Default `default`. */
  readonly cluster?: string;
}

export interface KeySchema {
  readonly base: string;
  readonly revision: string;
  readonly epoch: string;
  readonly log: string;
  readonly zones: string;
  /** Prefix of the per-zone hashes (scripts that visit every zone derive `kv:<zone>` from it). */
  readonly zonePrefix: string;
  zone(name: string): string;
  readonly expiry: string;
  readonly registry: string;
  readonly replicas: string;
  readonly replicasExpiry: string;
  readonly counters: string;
  readonly audit: string;
  readonly channel: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/** The keys of one limitswitch cluster. */
export function keySchema(options: KeySchemaOptions = {}): KeySchema {
  const prefix = options.prefix ?? 'limitswitch';
  const cluster = options.cluster ?? 'default';
  if (!NAME.test(prefix) || !NAME.test(cluster)) {
    throw new LimitswitchError(
      'RL_ERR_CONFIG_INVALID',
      `store prefix and cluster name must match ${NAME.source}: "${prefix}", "${cluster}"`,
    );
  }
  const base = `${prefix}:{${cluster}}`;
  const zonePrefix = `${base}:kv:`;
  return {
    base,
    revision: `${base}:revision`,
    epoch: `${base}:epoch`,
    log: `${base}:log`,
    zones: `${base}:zones`,
    zonePrefix,
    zone: (name) => `${zonePrefix}${name}`,
    expiry: `${base}:expiry`,
    registry: `${base}:registry`,
    replicas: `${base}:replicas`,
    replicasExpiry: `${base}:replicas-expiry`,
    counters: `${base}:counters`,
    audit: `${base}:audit`,
    channel: `${base}:changes`,
  };
}
