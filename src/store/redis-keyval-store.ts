/**
 * `KeyvalStore` on Redis (standalone, Sentinel or Cluster; see `redis-connection.ts` for URLs and
 * `keys.ts` for the layout). Each keyval mutation is one Lua script: precondition, write, revision,
 * bounded change log, PUBLISH — all or nothing. Commands never queue while Redis is away: they wait
 * at most `commandTimeoutMs` for a connection and then fail with `RL_ERR_STORE_UNAVAILABLE`.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { put } from '../shared/dictionary.ts';
import { LimitswitchError } from '../shared/errors.ts';
import { type KeySchema, type KeySchemaOptions, keySchema } from './keys.ts';
import {
  keyExistsError,
  keyNotFoundError,
  keyRequiredError,
  onlyOneKeyError,
  storeUnavailableError,
} from './keyval-errors.ts';
import {
  type AuditEntry,
  emptyCounters,
  type KeyvalChange,
  type KeyvalEntry,
  type KeyvalHead,
  type KeyvalSnapshot,
  type KeyvalStore,
  type KeyvalZoneInfo,
  type LimitReqCounters,
  type MutationResult,
  type ReplicaInfo,
  type ReplicaRecord,
  type Unsubscribe,
} from './keyval-store.ts';
import { createRedisClient, type RedisConnectionOptions } from './redis-connection.ts';
import { waitUntilReady } from './redis-ready.ts';
import { decodeEntry, mapError, pairs } from './redis-replies.ts';
import { defineScripts, runScript, type ScriptName } from './redis-scripts.ts';
import { RedisSubscriber } from './redis-subscriber.ts';

export interface RedisKeyvalStoreOptions extends RedisConnectionOptions, KeySchemaOptions {
  /** `redis://…`, `rediss://…`, `redis+sentinel://…` or `redis+cluster://…`. */
  readonly url: string;
  /** Change log length (Redis stream, trimmed exactly). Default 10000. */
  readonly maxLogEntries?: number;
  /** Audit entries kept. Default 1000. */
  readonly maxAuditEntries?: number;
  /** The writer's clock (preconditions, heartbeats). Default `Date.now`. */
  readonly nowMs?: () => number;
}

const COUNTER_FIELDS = ['passed', 'delayed', 'rejected', 'delayed_dry_run', 'rejected_dry_run'] as const;

type Reply = readonly unknown[];

/** `KeyvalStore` on Redis; connects in the background, usable as soon as it is constructed. */
export class RedisKeyvalStore implements KeyvalStore {
  readonly keys: KeySchema;
  readonly #options: RedisKeyvalStoreOptions;
  readonly #client: Redis | Cluster;
  readonly #subscriber: RedisSubscriber;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #closed = false;

  constructor(options: RedisKeyvalStoreOptions) {
    this.#options = options;
    this.keys = keySchema(options);
    this.#timeoutMs = options.commandTimeoutMs ?? 2000;
    this.#now = options.nowMs ?? Date.now;
    this.#client = createRedisClient(options.url, options);
    // Errors surface through commands; the event only must not go unhandled.
    this.#client.on('error', () => {});
    defineScripts(this.#client);
    this.#subscriber = new RedisSubscriber(
      () => createRedisClient(options.url, options, 'subscriber'),
      this.keys.channel,
      this.#timeoutMs,
    );
  }

  /** The command connection's state, for metrics and readiness. */
  get connected(): boolean {
    return this.#client.status === 'ready';
  }

  async add(zone: string, entries: Readonly<Record<string, KeyvalEntry>>): Promise<MutationResult> {
    const keys = Object.keys(entries);
    if (keys.length === 0 || keys.includes('')) throw keyRequiredError();
    const copy: Record<string, KeyvalEntry> = {};
    const args: (string | number)[] = [];
    for (const key of keys) {
      const entry = { value: entries[key]!.value, expireAtMs: entries[key]!.expireAtMs };
      put(copy, key, entry);
      args.push(key, JSON.stringify(entry), entry.expireAtMs ?? '');
    }
    const only = keys.length === 1 ? keys[0]! : null;
    const body =
      only !== null
        ? { op: 'set', zone, key: only, value: copy[only]!.value, expireAtMs: copy[only]!.expireAtMs }
        : { op: 'set-many', zone, entries: copy };
    const reply = await this.#mutate('add-6', zone, [zone, JSON.stringify(body), ...args]);
    return { revision: Number(reply[1]), previous: Object.fromEntries(keys.map((k) => [k, null])) };
  }

  change(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult> {
    return this.#put('change', zone, key, entry);
  }

  set(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult> {
    if (key === '') return Promise.reject(keyRequiredError());
    return this.#put('set', zone, key, entry);
  }

  async delete(zone: string, key: string): Promise<MutationResult> {
    const body = JSON.stringify({ op: 'delete', zone, key });
    const reply = await this.#mutate('delete-6', zone, [zone, body, key]);
    return { revision: Number(reply[1]), previous: { [key]: decodeEntry(reply[2]).value } };
  }

  async empty(zone: string): Promise<MutationResult> {
    const reply = await this.#mutate('empty-6', zone, [zone, JSON.stringify({ op: 'empty', zone })]);
    const previous: Record<string, string | null> = {};
    for (const [key, json] of pairs(reply[2])) put(previous, key, decodeEntry(json).value);
    return { revision: Number(reply[1]), previous };
  }

  async expireDue(nowMs: number): Promise<MutationResult | null> {
    const reply = await this.#mutate('expire-5', null, [this.keys.zonePrefix], nowMs);
    const revision = Number(reply[1]);
    if (revision === 0) return null;
    const expired: Record<string, Record<string, string>> = {};
    for (let i = 2; i < reply.length; i += 2) {
      const zone = String(reply[i]);
      expired[zone] = {};
      for (const [key, json] of pairs(reply[i + 1])) put(expired[zone], key, decodeEntry(json).value);
    }
    return { revision, previous: {}, expired };
  }

  async getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> {
    const hash = await this.#run(() => this.#client.hgetall(this.keys.zone(zone)));
    const out: Record<string, KeyvalEntry> = {};
    for (const [key, json] of Object.entries(hash)) {
      const entry = decodeEntry(json);
      if (entry.expireAtMs === null || entry.expireAtMs > nowMs) put(out, key, entry);
    }
    return out;
  }

  async snapshot(): Promise<KeyvalSnapshot> {
    const k = this.keys;
    const reply = (await this.#script(
      'snapshot-4',
      [k.revision, k.epoch, k.zones, k.expiry],
      [randomUUID(), k.zonePrefix],
    )) as Reply;
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    for (let i = 2; i < reply.length; i += 2) {
      const entries: Record<string, KeyvalEntry> = {};
      for (const [key, json] of pairs(reply[i + 1])) put(entries, key, decodeEntry(json));
      if (Object.keys(entries).length > 0) zones[String(reply[i])] = entries;
    }
    return { revision: Number(reply[0]), epoch: String(reply[1]), zones };
  }

  async revision(): Promise<number> {
    return Number((await this.#run(() => this.#client.get(this.keys.revision))) ?? 0);
  }

  async head(): Promise<KeyvalHead> {
    const reply = (await this.#script(
      'head-2',
      [this.keys.revision, this.keys.epoch],
      [randomUUID()],
    )) as Reply;
    return { revision: Number(reply[0]), epoch: String(reply[1]) };
  }

  async changesSince(afterRevision: number): Promise<KeyvalChange[] | null> {
    const reply = await this.#script('changes-2', [this.keys.revision, this.keys.log], [afterRevision]);
    if (reply === null) return null;
    return (reply as string[]).map((json) => JSON.parse(json) as KeyvalChange);
  }

  async subscribe(onChange: (change: KeyvalChange, epoch: string) => void): Promise<Unsubscribe> {
    this.#open();
    try {
      return await this.#subscriber.add(onChange);
    } catch (err) {
      throw mapError(err);
    }
  }

  async registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void> {
    if (zones.length === 0) return;
    const fields = zones.flatMap((z) => [
      z.name,
      JSON.stringify({ name: z.name, type: z.type, timeoutMs: z.timeoutMs }),
    ]);
    await this.#run(() => this.#client.hset(this.keys.registry, ...fields));
  }

  async zones(): Promise<KeyvalZoneInfo[]> {
    const hash = await this.#run(() => this.#client.hgetall(this.keys.registry));
    return Object.values(hash)
      .map((json) => JSON.parse(json) as KeyvalZoneInfo)
      .sort((a, b) => compare(a.name, b.name));
  }

  async heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void> {
    const nowMs = this.#now();
    const record = { ...info, lastHeartbeatMs: nowMs };
    await this.#exec((m) =>
      m
        .hset(this.keys.replicas, info.id, JSON.stringify(record))
        .hset(this.keys.replicasExpiry, info.id, nowMs + ttlMs),
    );
  }

  async deregister(id: string): Promise<void> {
    await this.#run(() => this.#client.hset(this.keys.replicasExpiry, id, '0'));
  }

  async replicas(nowMs: number): Promise<ReplicaRecord[]> {
    const [records, expiry] = await this.#run(() =>
      Promise.all([this.#client.hgetall(this.keys.replicas), this.#client.hgetall(this.keys.replicasExpiry)]),
    );
    return Object.entries(records)
      .map(([id, json]) => {
        const record = JSON.parse(json) as Omit<ReplicaRecord, 'live'>;
        return { ...record, live: nowMs < Number(expiry[id] ?? 0) };
      })
      .sort((a, b) => compare(a.id, b.id));
  }

  async addCounters(replicaId: string, deltas: Readonly<Record<string, LimitReqCounters>>): Promise<void> {
    const increments: [string, number][] = [];
    for (const [zone, delta] of Object.entries(deltas)) {
      for (const field of COUNTER_FIELDS) {
        // Zero deltas still create the field, so a zone shows up with zeros once reported.
        increments.push([`${replicaId}\0${zone}\0${field}`, delta[field]]);
      }
    }
    if (increments.length === 0) return;
    await this.#exec((m) => {
      for (const [field, n] of increments) m.hincrby(this.keys.counters, field, n);
      return m;
    });
  }

  async counters(): Promise<Record<string, Record<string, LimitReqCounters>>> {
    const hash = await this.#run(() => this.#client.hgetall(this.keys.counters));
    const out: Record<string, Record<string, LimitReqCounters>> = {};
    for (const [field, value] of Object.entries(hash)) {
      const [replicaId, zone, counter] = field.split('\0') as [string, string, keyof LimitReqCounters];
      out[replicaId] ??= {};
      out[replicaId][zone] ??= emptyCounters();
      out[replicaId][zone][counter] = Number(value);
    }
    return out;
  }

  async resetCounters(zone: string): Promise<void> {
    await this.#script('counters-reset-1', [this.keys.counters], [zone]);
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    const max = this.#options.maxAuditEntries ?? 1000;
    await this.#exec((m) =>
      m.lpush(this.keys.audit, JSON.stringify(entry)).ltrim(this.keys.audit, 0, max - 1),
    );
  }

  async audit(limit: number): Promise<AuditEntry[]> {
    if (limit <= 0) return [];
    const list = await this.#run(() => this.#client.lrange(this.keys.audit, 0, limit - 1));
    return list.map((json) => JSON.parse(json) as AuditEntry);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#subscriber.close();
    this.#client.disconnect();
  }

  async #put(mode: 'change' | 'set', zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult> {
    const copy = { value: entry.value, expireAtMs: entry.expireAtMs };
    const body = JSON.stringify({ op: 'set', zone, key, value: copy.value, expireAtMs: copy.expireAtMs });
    const args = [zone, body, mode, key, JSON.stringify(copy), copy.expireAtMs ?? ''];
    const reply = await this.#mutate('put-6', zone, args);
    return { revision: Number(reply[1]), previous: { [key]: reply[2] ? decodeEntry(reply[2]).value : null } };
  }

  /** Run a mutation script (common KEYS/ARGV first) and turn `{'err', …}` replies into errors. */
  async #mutate(
    name: ScriptName,
    zone: string | null,
    args: (string | number)[],
    nowMs = this.#now(),
  ): Promise<Reply> {
    const k = this.keys;
    const keys = [k.revision, k.epoch, k.log, k.zones, k.expiry];
    if (zone !== null) keys.push(k.zone(zone));
    const common = [randomUUID(), this.#options.maxLogEntries ?? 10_000, k.channel, nowMs];
    const reply = (await this.#script(name, keys, [...common, ...args])) as Reply;
    if (reply[0] === 'ok') return reply;
    switch (reply[1]) {
      case 'exists':
        throw keyExistsError(String(reply[2]));
      case 'not-found':
        throw keyNotFoundError();
      case 'only-one':
        throw onlyOneKeyError();
      default:
        throw new LimitswitchError(
          'RL_ERR_STORE_PROTOCOL',
          `unexpected script reply: ${JSON.stringify(reply)}`,
        );
    }
  }

  #script(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.#run(() => runScript(this.#client, name, keys, args));
  }

  async #exec(build: (m: ReturnType<Redis['multi']>) => ReturnType<Redis['multi']>): Promise<void> {
    const results = await this.#run(() => build(this.#client.multi() as ReturnType<Redis['multi']>).exec());
    for (const [err] of results ?? []) if (err) throw mapError(err);
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    this.#open();
    try {
      await waitUntilReady(this.#client, this.#timeoutMs);
      return await command();
    } catch (err) {
      throw mapError(err);
    }
  }

  #open(): void {
    if (this.#closed) throw storeUnavailableError(new Error('store closed'));
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
