/**
 * The keyvals port on Redis (see `keys.ts` for the layout). Each mutation is one Lua script:
 * precondition, write, revision, bounded change log, audit entries, PUBLISH — all or nothing.
 */
import { randomUUID } from 'node:crypto';
import { compareText, put } from '../../shared/dictionary.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import type { AuditNote } from '../audit-trail.ts';
import { zoneBudgetBytes } from '../keyval-bytes.ts';
import { keyExistsError, keyNotFoundError, onlyOneKeyError, zoneFullError } from '../keyval-errors.ts';
import type {
  KeyvalChange,
  KeyvalChangeBody,
  KeyvalEntry,
  KeyvalHead,
  KeyvalSnapshot,
  KeyvalStore,
  MutationResult,
  Unsubscribe,
  WriteOptions,
} from '../keyval-store.ts';
import type { RedisBackend } from './redis-backend.ts';
import { decodeEntry, mapError, pairs } from './redis-replies.ts';
import type { ScriptName } from './redis-scripts.ts';

export interface RedisKeyvalsOptions {
  /** Change log length (Redis stream, trimmed exactly). Default 10000. */
  readonly maxLogEntries?: number;
  /** Audit entries kept. Default 1000. */
  readonly maxAuditEntries?: number;
}

type Reply = readonly unknown[];

export class RedisKeyvals implements KeyvalStore {
  readonly #redis: RedisBackend;
  readonly #maxLog: number;
  readonly #maxAudit: number;

  constructor(redis: RedisBackend, options: RedisKeyvalsOptions = {}) {
    this.#redis = redis;
    this.#maxLog = options.maxLogEntries ?? 10_000;
    this.#maxAudit = options.maxAuditEntries ?? 1000;
  }

  async add(
    zone: string,
    entries: Readonly<Record<string, KeyvalEntry>>,
    options: WriteOptions = {},
  ): Promise<MutationResult> {
    const keys = Object.keys(entries);
    const copy: Record<string, KeyvalEntry> = {};
    const args: (string | number)[] = [];
    for (const key of keys) {
      const entry = { value: entries[key]!.value, expireAtMs: entries[key]!.expireAtMs };
      put(copy, key, entry);
      args.push(key, JSON.stringify(entry), entry.expireAtMs ?? '', entry.value);
    }
    const only = keys.length === 1 ? keys[0]! : null;
    const body: KeyvalChangeBody =
      only !== null
        ? { op: 'set', zone, key: only, value: copy[only]!.value, expireAtMs: copy[only]!.expireAtMs }
        : { op: 'set-many', zone, entries: copy };
    const args0 = [zone, JSON.stringify(body), budget(options)];
    const { reply, commit } = await this.#mutate('add-8', zone, options.note, [...args0, ...args]);
    return { revision: Number(reply[1]), commit, previous: Object.fromEntries(keys.map((k) => [k, null])) };
  }

  change(zone: string, key: string, entry: KeyvalEntry, options: WriteOptions = {}): Promise<MutationResult> {
    return this.#put('change', zone, key, entry, options);
  }

  set(zone: string, key: string, entry: KeyvalEntry, options: WriteOptions = {}): Promise<MutationResult> {
    return this.#put('set', zone, key, entry, options);
  }

  async delete(zone: string, key: string, { note }: WriteOptions = {}): Promise<MutationResult> {
    const body = JSON.stringify({ op: 'delete', zone, key });
    const { reply, commit } = await this.#mutate('delete-8', zone, note, [zone, body, key]);
    return { revision: Number(reply[1]), commit, previous: { [key]: decodeEntry(reply[2]).value } };
  }

  async empty(zone: string, { note }: WriteOptions = {}): Promise<MutationResult> {
    const body = JSON.stringify({ op: 'empty', zone });
    const { reply, commit } = await this.#mutate('empty-8', zone, note, [zone, body]);
    const previous: Record<string, string | null> = {};
    for (const [key, json] of pairs(reply[2])) put(previous, key, decodeEntry(json).value);
    return { revision: Number(reply[1]), commit, previous };
  }

  async expireDue(nowMs: number): Promise<MutationResult | null> {
    const prefix = this.#redis.keys.zonePrefix;
    const { reply, commit } = await this.#mutate('expire-7', null, undefined, [prefix], nowMs);
    const revision = Number(reply[1]);
    if (revision === 0) return null;
    const expired: Record<string, Record<string, string>> = {};
    for (let i = 2; i < reply.length; i += 2) {
      const zone = String(reply[i]);
      expired[zone] = {};
      for (const [key, json] of pairs(reply[i + 1])) put(expired[zone], key, decodeEntry(json).value);
    }
    // One change per zone: the n-th commit of a mutation is `<id>:<n>` (lib/commit.lua).
    const changes = (reply.length - 2) / 2;
    return { revision, commit: changes > 1 ? `${commit}:${changes}` : commit, previous: {}, expired };
  }

  async restore(
    zones: Readonly<Record<string, Readonly<Record<string, KeyvalEntry>>>>,
    note: AuditNote,
  ): Promise<MutationResult | null> {
    const args: (string | number)[] = [this.#redis.keys.zonePrefix];
    for (const zone of Object.keys(zones).sort(compareText)) {
      const entries = zones[zone]!;
      const copy: Record<string, KeyvalEntry> = {};
      const items: (string | number)[] = [];
      for (const [key, entry] of Object.entries(entries)) {
        const stored = { value: entry.value, expireAtMs: entry.expireAtMs };
        put(copy, key, stored);
        items.push(
          key,
          JSON.stringify(stored),
          stored.expireAtMs === null ? '' : String(stored.expireAtMs),
          stored.value,
        );
      }
      if (items.length === 0) continue;
      args.push(zone, JSON.stringify({ op: 'set-many', zone, entries: copy }), JSON.stringify(items));
    }
    const { reply, commit } = await this.#mutate('restore-7', null, note, args);
    const revision = Number(reply[1]);
    if (revision === 0) return null;
    const changes = Number(reply[2]);
    return { revision, commit: changes > 1 ? `${commit}:${changes}` : commit, previous: {} };
  }

  async getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> {
    const hash = await this.#redis.run((c) => c.hgetall(this.#redis.keys.zone(zone)));
    const out: Record<string, KeyvalEntry> = {};
    for (const [key, json] of Object.entries(hash)) {
      const entry = decodeEntry(json);
      if (entry.expireAtMs === null || entry.expireAtMs > nowMs) put(out, key, entry);
    }
    return out;
  }

  async snapshot(): Promise<KeyvalSnapshot> {
    const k = this.#redis.keys;
    const reply = (await this.#redis.script(
      'snapshot-4',
      [k.revision, k.epoch, k.zones, k.log],
      [randomUUID(), k.zonePrefix],
    )) as Reply;
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    for (let i = 3; i < reply.length; i += 2) {
      const entries: Record<string, KeyvalEntry> = {};
      for (const [key, json] of pairs(reply[i + 1])) put(entries, key, decodeEntry(json));
      if (Object.keys(entries).length > 0) zones[String(reply[i])] = entries;
    }
    return { revision: Number(reply[0]), epoch: String(reply[1]), commit: String(reply[2]), zones };
  }

  async head(): Promise<KeyvalHead> {
    const k = this.#redis.keys;
    const reply = (await this.#redis.script('head-3', [k.revision, k.epoch, k.log], [randomUUID()])) as Reply;
    return { revision: Number(reply[0]), epoch: String(reply[1]), commit: String(reply[2]) };
  }

  async commitAt(revision: number): Promise<string | null> {
    if (revision === 0) return '';
    const reply = await this.#redis.script('commit-at-1', [this.#redis.keys.log], [revision]);
    return reply === null ? null : String(reply);
  }

  async changesSince(afterRevision: number): Promise<KeyvalChange[] | null> {
    const k = this.#redis.keys;
    const reply = await this.#redis.script('changes-2', [k.revision, k.log], [afterRevision]);
    if (reply === null) return null;
    return (reply as string[]).map((json) => JSON.parse(json) as KeyvalChange);
  }

  async subscribe(onChange: (change: KeyvalChange, epoch: string) => void): Promise<Unsubscribe> {
    this.#redis.assertOpen();
    try {
      return await this.#redis.subscriber.add(onChange);
    } catch (err) {
      throw this.#redis.named(mapError(err));
    }
  }

  async #put(
    mode: 'change' | 'set',
    zone: string,
    key: string,
    entry: KeyvalEntry,
    options: WriteOptions,
  ): Promise<MutationResult> {
    const copy = { value: entry.value, expireAtMs: entry.expireAtMs };
    const body = JSON.stringify({ op: 'set', zone, key, value: copy.value, expireAtMs: copy.expireAtMs });
    const args = [
      zone,
      body,
      mode,
      key,
      JSON.stringify(copy),
      copy.expireAtMs ?? '',
      copy.value,
      budget(options),
    ];
    const { reply, commit } = await this.#mutate('put-8', zone, options.note, args);
    const previous = { [key]: reply[2] ? decodeEntry(reply[2]).value : null };
    return { revision: Number(reply[1]), commit, previous };
  }

  /**
   * Run a mutation script (common KEYS/ARGV first) and turn `{'err', …}` replies into errors; `commit`
   * is the id the script gave its (first) change.
   */
  async #mutate(
    name: ScriptName,
    zone: string | null,
    note: AuditNote | undefined,
    args: (string | number)[],
    nowMs = this.#redis.nowMs(),
  ): Promise<{ reply: Reply; commit: string }> {
    const k = this.#redis.keys;
    const keys = [k.revision, k.epoch, k.log, k.zones, k.expiry, k.audit, k.zoneBytes];
    if (zone !== null) keys.push(k.zone(zone));
    const commit = randomUUID();
    const common = [
      commit,
      this.#maxLog,
      k.channel,
      nowMs,
      note
        ? JSON.stringify({
            timeMs: note.timeMs,
            tokenId: note.tokenId,
            client: note.client,
            reason: note.reason,
          })
        : '',
      this.#maxAudit,
    ];
    const reply = (await this.#redis.write(name, keys, [...common, ...args])) as Reply;
    if (reply[0] === 'ok') return { reply, commit };
    switch (reply[1]) {
      case 'exists':
        throw keyExistsError(String(reply[2]));
      case 'not-found':
        throw keyNotFoundError();
      case 'only-one':
        throw onlyOneKeyError(zone ?? '');
      case 'full':
        throw zoneFullError(zone ?? '');
      default:
        throw new LimitswitchError(
          'RL_ERR_STORE_PROTOCOL',
          `unexpected script reply: ${JSON.stringify(reply)}`,
        );
    }
  }
}

/** The zone's budget as a script argument: bytes, or '' for unbounded. */
function budget(options: WriteOptions): number | '' {
  return options.sizeBytes === null || options.sizeBytes === undefined
    ? ''
    : zoneBudgetBytes(options.sizeBytes);
}
