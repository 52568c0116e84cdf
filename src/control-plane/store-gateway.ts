/**
 * Every store call the control plane makes goes through here: bounded in time (a store that hangs
 * answers 503 StoreUnavailable within `timeoutMs`, never a stuck request), timed for `/metrics`, and
 * unexpected failures (a dropped connection) reported as StoreUnavailable rather than 500. The bound
 * is longer than the store's own wait for a connection (`STORE_GATEWAY_TIMEOUT_MS`), so a store that
 * is down answers first, naming itself and why (`redis://…: connection refused`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { ControlPlaneMetrics } from '../metrics/control-plane-metrics.ts';
import { systemClock } from '../shared/clock.ts';
import { isLimitswitchError, LimitswitchError } from '../shared/errors.ts';
import type { AuditTrail } from '../store/audit-trail.ts';
import type { ClusterRegistry } from '../store/cluster-registry.ts';
import type { CounterStore } from '../store/counter-store.ts';
import type { KeyvalReader, KeyvalWriter } from '../store/keyval-store.ts';
import type { LeaseStore } from '../store/lease-store.ts';
import { StoreTrouble } from '../store/store-trouble.ts';

/** The gateway's bound: the Redis store's own 2000 ms wait for a connection, and time to say why. */
export const STORE_GATEWAY_TIMEOUT_MS = 2500;

/** The store ports the control plane uses (it never follows the feed). */
export interface ControlPlaneStore {
  readonly keyvals: KeyvalReader & KeyvalWriter;
  readonly registry: ClusterRegistry;
  readonly counters: CounterStore;
  readonly audit: AuditTrail;
  readonly leases: LeaseStore;
}

export class StoreGateway {
  readonly store: ControlPlaneStore;
  readonly #timeoutMs: number;
  readonly #metrics: ControlPlaneMetrics;
  /** Store failures in the log: once per outage and reason, not once per call. */
  readonly #trouble: StoreTrouble;

  constructor(
    store: ControlPlaneStore,
    timeoutMs: number,
    metrics: ControlPlaneMetrics,
    log: FastifyBaseLogger,
  ) {
    this.store = store;
    this.#timeoutMs = timeoutMs;
    this.#metrics = metrics;
    this.#trouble = new StoreTrouble((level, message, fields) => log[level](fields, message), systemClock);
  }

  /** Run `fn(store)` as operation `op`; precondition errors (409, 404, …) pass through unchanged. */
  async call<T>(op: string, fn: (store: ControlPlaneStore) => Promise<T>): Promise<T> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new LimitswitchError('StoreUnavailable', undefined, {
              // the same text whatever the call, so an outage is one line however many calls fail
              cause: new Error(`no answer within ${this.#timeoutMs} ms`),
            }),
          ),
        this.#timeoutMs,
      );
    });
    let ok = false;
    try {
      const result = await Promise.race([fn(this.store), timeout]);
      ok = true;
      this.#trouble.answered();
      return result;
    } catch (err) {
      // A precondition failure is an answer from the store, not an outage.
      const precondition = isLimitswitchError(err) && err.status < 500;
      ok = precondition;
      if (precondition) {
        this.#trouble.answered();
        throw err;
      }
      this.#trouble.failed(op, err, 'API calls answer 503 StoreUnavailable');
      if (isLimitswitchError(err)) throw err;
      throw new LimitswitchError('StoreUnavailable', undefined, { cause: err });
    } finally {
      clearTimeout(timer);
      this.#metrics.observeStore(op, (performance.now() - started) / 1000, ok);
    }
  }

  /** The store's current keyval revision. */
  async revision(): Promise<number> {
    return (await this.call('head', (s) => s.keyvals.head())).revision;
  }
}
