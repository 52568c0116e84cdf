/**
 * One `limit_conn_zone`: per key, the requests in progress (ngx_http_limit_conn_module.c). A key's
 * node lives while its count is above zero and is charged against the zone's `size` as nginx's slab
 * allocator charges it: the tree node's 32 bytes up to `color`, 4 of count and length, the key, rounded
 * up to a power of two — out of the pages a slab pool leaves after its bookkeeping. Pure.
 */
import type { ComplexValue } from '../complex-value.ts';
import { type CounterFamily, type Counters, zeroCounters } from '../counters.ts';

/** NGINX Plus's `/api/9/http/limit_conns/{zone}` fields, in the API's order. */
export const LIMIT_CONN_COUNTERS = ['passed', 'rejected', 'rejected_dry_run'] as const;
export type LimitConnCounter = (typeof LIMIT_CONN_COUNTERS)[number];
export type LimitConnCounters = Counters<LimitConnCounter>;
export const LIMIT_CONN: CounterFamily<LimitConnCounter> = {
  kind: 'limit_conn',
  fields: LIMIT_CONN_COUNTERS,
};

/** `offsetof(ngx_rbtree_node_t, color) + offsetof(ngx_http_limit_conn_node_t, data)` on 64-bit. */
const NODE_BYTES = 36;
const PAGE_BYTES = 4096;
/** A slab pool's own share of a zone: a page descriptor per page and its header (as keyval zones). */
const PAGE_DESCRIPTOR_BYTES = 24;
const POOL_HEADER_BYTES = 1024;

/** The slab chunk a node for a key of `keyBytes` takes. */
export function limitConnNodeBytes(keyBytes: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(8, NODE_BYTES + keyBytes)));
}

/** A key's node: its requests in progress (nginx's `ngx_http_limit_conn_node_t.conn`). */
export interface ConnNode {
  count: number;
}

/** What acquiring a slot gave: the key's node (counted), the key at its limit already, or no room. */
export type AcquireResult = ConnNode | 'busy' | 'full';

export class LimitConnZone {
  readonly name: string;
  readonly key: ComplexValue;
  readonly sizeBytes: number;
  readonly counters: LimitConnCounters = zeroCounters(LIMIT_CONN_COUNTERS);
  readonly #conns = new Map<string, ConnNode>();
  readonly #budgetBytes: number;
  #usedBytes = 0;
  #inProgress = 0;

  constructor(name: string, key: ComplexValue, sizeBytes: number) {
    this.name = name;
    this.key = key;
    this.sizeBytes = sizeBytes;
    this.#budgetBytes =
      sizeBytes - Math.ceil(sizeBytes / PAGE_BYTES) * PAGE_DESCRIPTOR_BYTES - POOL_HEADER_BYTES;
  }

  /** One more request for `key` (a byte string), unless it has `limit` in progress already. */
  acquire(key: string, limit: number): AcquireResult {
    let node = this.#conns.get(key);
    if (node !== undefined) {
      if (node.count >= limit) return 'busy';
      node.count++;
      this.#inProgress++;
      return node;
    }
    const bytes = limitConnNodeBytes(key.length);
    if (this.#usedBytes + bytes > this.#budgetBytes) return 'full';
    this.#usedBytes += bytes;
    node = { count: 1 };
    this.#conns.set(key, node);
    this.#inProgress++;
    return node;
  }

  /** A request for `key`, counted on `node`, is over; the node goes when the last one is. */
  release(key: string, node: ConnNode): void {
    this.#inProgress--;
    if (--node.count > 0) return;
    this.#conns.delete(key);
    this.#usedBytes -= limitConnNodeBytes(key.length);
  }

  /** Requests in progress for `key`. */
  inProgress(key: string): number {
    return this.#conns.get(key)?.count ?? 0;
  }

  /** Keys with requests in progress. */
  get keys(): number {
    return this.#conns.size;
  }

  /** Requests in progress, every key together (Kubernetes' current in-flight requests, per zone). */
  get requestsInProgress(): number {
    return this.#inProgress;
  }
}
