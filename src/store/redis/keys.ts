/**
 * The Redis key schema, the one place that names Redis keys. Every key is
 * `<prefix>:{<cluster>}:<entity>`: the `{<cluster>}` hash tag puts all of one cluster's keys in one Redis
 * Cluster slot, so each Lua script touches one slot only. Several limitswitch clusters can share one
 * Redis by choosing different cluster names (or prefixes).
 *
 * | key                        | port      | type   | content                                            |
 * |----------------------------|-----------|--------|----------------------------------------------------|
 * | `revision`                 | keyvals   | string | the store revision (INCR per change; absent = 0)   |
 * | `epoch`                    | keyvals   | string | random id of this history (set once, when absent)  |
 * | `log`                      | keyvals   | stream | change log, entry id `<revision>-0`, field `c` = change JSON |
 * | `zones`                    | keyvals   | set    | zone names that hold keys                          |
 * | `kv:<zone>`                | keyvals   | hash   | key → `{"value":…,"expireAtMs":…}`                 |
 * | `expiry`                   | keyvals   | zset   | `<zone>\0<key>` scored by expireAtMs (expiring keys only) |
 * | `zone-bytes`               | keyvals   | hash   | zone → bytes its entries take (keyval-bytes.ts)      |
 * | `registry`                 | registry  | hash   | zone name → KeyvalZoneInfo JSON                    |
 * | `replicas`                 | registry  | hash   | replica id → ReplicaInfo JSON + lastHeartbeatMs    |
 * | `replicas-expiry`          | registry  | hash   | replica id → epoch ms after which it is not live   |
 * | `counters:<kind>`          | counters  | hash   | `<replica>\0<zone>\0<field>` → integer; `\0<zone>\0resets` → resets |
 * | `counter-batches`          | counters  | hash   | `<replica>\0<incarnation>` → last batch seq applied |
 * | `audit`                    | audit     | list   | AuditEntry JSON, newest first, bounded             |
 * | `lease:<name>`             | leases    | string | the holder's token, with the lease's TTL (PX)      |
 * | `lease-records`            | leases    | hash   | record name → `{"value":…,"expireAtMs":…}`          |
 * | `lease-records-expiry`     | leases    | zset   | record name scored by expireAtMs (expiring ones)   |
 * | `limit-sync:<zone>`        | limitSync | hash   | limit key → the cluster's bucket JSON (limit-sync-5.lua) |
 * | `limit-sync-touched:<zone>`| limitSync | zset   | limit key scored by the last exchange naming it    |
 * | `limit-sync-senders:<zone>`| limitSync | hash   | replica id → `<incarnation> <last batch seq applied>` |
 * | `limit-sync-heard:<zone>`  | limitSync | zset   | replica id scored by its last exchange (the store's ms) |
 *
 * The pub/sub channel `<prefix>:{<cluster>}:changes` carries each keyval change (with the epoch) as JSON.
 */
import { LimitswitchError } from '../../shared/errors.ts';

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
  readonly zoneBytes: string;
  readonly registry: string;
  readonly replicas: string;
  readonly replicasExpiry: string;
  counters(kind: string): string;
  readonly counterBatches: string;
  readonly audit: string;
  lease(name: string): string;
  readonly leaseRecords: string;
  readonly leaseRecordsExpiry: string;
  limitSync(zone: string): string;
  limitSyncTouched(zone: string): string;
  limitSyncSenders(zone: string): string;
  limitSyncHeard(zone: string): string;
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
    zoneBytes: `${base}:zone-bytes`,
    registry: `${base}:registry`,
    replicas: `${base}:replicas`,
    replicasExpiry: `${base}:replicas-expiry`,
    counters: (kind) => `${base}:counters:${kind}`,
    counterBatches: `${base}:counter-batches`,
    audit: `${base}:audit`,
    lease: (name) => `${base}:lease:${name}`,
    leaseRecords: `${base}:lease-records`,
    leaseRecordsExpiry: `${base}:lease-records-expiry`,
    limitSync: (zone) => `${base}:limit-sync:${zone}`,
    limitSyncTouched: (zone) => `${base}:limit-sync-touched:${zone}`,
    limitSyncSenders: (zone) => `${base}:limit-sync-senders:${zone}`,
    limitSyncHeard: (zone) => `${base}:limit-sync-heard:${zone}`,
    channel: `${base}:changes`,
  };
}
