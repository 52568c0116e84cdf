/**
 * What a worker thread is started with (its `workerData`): the configuration, the main thread's
 * zones to build its site on, its counter slice, and how it listens and reports.
 */
import type { Config } from '../../config/model.ts';
import type { SiteMemory } from '../../engine/http/site-memory.ts';
import type { ErrorLogLevel } from '../logs/error-log.ts';

export interface WorkerStart {
  readonly config: Config;
  readonly memory: SiteMemory;
  /** The balancer state of every upstream group with a `zone`, by name (nginx's upstream zone). */
  readonly upstreamMemory: ReadonlyMap<string, SharedArrayBuffer>;
  /** The counter slice it counts in, and the holder it names in a zone's lock. */
  readonly slice: number;
  /** The replica's connection numbers (nginx's `*N`), one counter for all its threads. */
  readonly connectionNumbers: SharedArrayBuffer;
  /** What TLS session ticket keys are made from: one for all workers, so tickets resume at any. */
  readonly ticketKeySeed: Uint8Array;
  readonly host: string | undefined;
  /** Configured port → port to bind (the ports the first worker bound, for `0`s). */
  readonly portMap: ReadonlyMap<number, number> | undefined;
  readonly errorLogLevel: ErrorLogLevel;
  /** Whether the main thread wants each finished exchange (access log, latency metrics). */
  readonly reportCompleted: boolean;
  /** How often the worker reports its upstream groups and routed-request counts. */
  readonly reportIntervalMs: number;
}
