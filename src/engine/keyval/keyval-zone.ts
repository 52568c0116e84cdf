/**
 * An NGINX Plus `keyval_zone`: key → value with per-key expiry, matched by the zone's `type`:
 * `string` (exact, case-sensitive), `prefix` (the longest record key that is a prefix of the search key
 * wins) or `ip` (the most specific CIDR containing the search address wins). Pure: time is `nowMs`.
 */
import { parseCidr } from '../net/address-text.ts';
import { CidrTable } from '../net/cidr-table.ts';
import {
  type KeyvalPublicationMemory,
  KeyvalPublisher,
  KeyvalSubscriber,
  newKeyvalPublicationMemory,
} from './keyval-publication.ts';
import type { KeyvalRecord } from './keyval-record.ts';

export type KeyvalType = 'string' | 'ip' | 'prefix';

/** Whether `key` can be a key of a zone of this type: not empty; an address or CIDR for `ip`. */
export function isKeyvalKey(type: KeyvalType, key: string): boolean {
  if (key.length === 0) return false;
  return type !== 'ip' || parseCidr(key) !== null;
}

export type { KeyvalRecord };

export class KeyvalZone {
  readonly name: string;
  readonly type: KeyvalType;
  readonly timeoutMs: number | null;
  private readonly records = new Map<string, KeyvalRecord>();
  /** `prefix`: distinct record-key lengths, longest first. */
  private prefixLengths: number[] = [];
  /** `ip`: CIDR index over the records. */
  private readonly cidrs = new CidrTable<KeyvalRecord>();
  /** The writer's side of a zone other threads read (keyval-publication.ts), and whether it is behind. */
  private publisher: KeyvalPublisher | null = null;
  private memory: KeyvalPublicationMemory | null = null;
  private unpublished = false;
  /** A reader's side: the zone is the writer's, read from its publications. */
  private subscriber: KeyvalSubscriber | null = null;

  constructor(name: string, type: KeyvalType, timeoutMs: number | null) {
    this.name = name;
    this.type = type;
    this.timeoutMs = timeoutMs;
  }

  /**
   * The memory other threads' zones read this one through ({@link readFrom}); from now on this zone
   * publishes what it holds there, now and at each {@link publish}.
   */
  share(): KeyvalPublicationMemory {
    if (this.memory === null) {
      this.memory = newKeyvalPublicationMemory(0);
      this.publisher = new KeyvalPublisher(this.memory);
      this.unpublished = true;
      this.publish();
    }
    return this.memory;
  }

  /** Makes this zone a reader of `memory`: it holds what the writer last published, and is not written. */
  readFrom(memory: KeyvalPublicationMemory): void {
    this.subscriber = new KeyvalSubscriber(memory);
    this.follow();
  }

  /** Shows the zone's records to its readers, if they changed since the last publication. */
  publish(): void {
    if (this.publisher === null || !this.unpublished) return;
    this.publisher.publish(this.records);
    this.unpublished = false;
  }

  get size(): number {
    this.follow();
    return this.records.size;
  }

  /** True when `key` is acceptable for this zone's type (`ip` zones take addresses and CIDRs only). */
  validKey(key: string): boolean {
    return isKeyvalKey(this.type, key);
  }

  set(key: string, record: KeyvalRecord): void {
    this.written();
    const isNew = !this.records.has(key);
    this.records.set(key, record);
    if (this.type === 'ip') this.cidrs.set(key, record);
    else if (this.type === 'prefix' && isNew) this.reindexPrefixes();
  }

  delete(key: string): boolean {
    this.written();
    if (!this.records.delete(key)) return false;
    if (this.type === 'ip') this.rebuildCidrs();
    else if (this.type === 'prefix') this.reindexPrefixes();
    return true;
  }

  clear(): void {
    this.written();
    this.records.clear();
    this.cidrs.clear();
    this.prefixLengths = [];
  }

  /** Replaces the whole content (a snapshot from the store). */
  replaceAll(entries: Iterable<[string, KeyvalRecord]>): void {
    this.written();
    this.fill(entries);
  }

  private fill(entries: Iterable<[string, KeyvalRecord]>): void {
    this.records.clear();
    for (const [key, record] of entries) this.records.set(key, record);
    if (this.type === 'ip') this.rebuildCidrs();
    else if (this.type === 'prefix') this.reindexPrefixes();
  }

  entries(): IterableIterator<[string, KeyvalRecord]> {
    this.follow();
    return this.records.entries();
  }

  /** Removes records whose time has come; returns their keys. A reader leaves it to the writer. */
  expire(nowMs: number): string[] {
    const expired: string[] = [];
    if (this.subscriber !== null) return expired;
    for (const [key, record] of this.records) {
      if (record.expireAtMs !== null && record.expireAtMs <= nowMs) expired.push(key);
    }
    for (const key of expired) this.delete(key);
    return expired;
  }

  /** The value the `keyval` variable takes for `searchKey`; `''` when nothing (live) matches. */
  lookup(searchKey: string, nowMs: number): string {
    if (this.subscriber?.changed()) this.follow();
    const record = this.find(searchKey);
    if (record === undefined) return '';
    if (record.expireAtMs !== null && record.expireAtMs <= nowMs) return '';
    return record.value;
  }

  private written(): void {
    if (this.subscriber !== null) throw new Error(`keyval zone "${this.name}" is written by another thread`);
    this.unpublished = true;
  }

  /** A reader takes the writer's last publication, if it has not yet. */
  private follow(): void {
    if (this.subscriber?.changed()) this.fill(this.subscriber.read());
  }

  private find(searchKey: string): KeyvalRecord | undefined {
    if (this.type === 'string') return this.records.get(searchKey);
    if (this.type === 'ip') return this.cidrs.lookup(searchKey);
    for (const length of this.prefixLengths) {
      if (length > searchKey.length) continue;
      const record = this.records.get(length === searchKey.length ? searchKey : searchKey.slice(0, length));
      if (record !== undefined) return record;
    }
    return undefined;
  }

  private reindexPrefixes(): void {
    const lengths = new Set<number>();
    for (const key of this.records.keys()) lengths.add(key.length);
    this.prefixLengths = [...lengths].sort((a, b) => b - a);
  }

  private rebuildCidrs(): void {
    this.cidrs.clear();
    for (const [key, record] of this.records) this.cidrs.set(key, record);
  }
}
