/**
 * What a worker thread tells the main thread, and how: events are batched and posted once per turn of
 * the worker's event loop (a request's access-log entry does not cost a message of its own).
 */
import type { MessagePort } from 'node:worker_threads';
import type { UpstreamInfo } from '../../engine/upstream/upstream-info.ts';
import type { CallbackKind } from '../http/contract/fault-boundary.ts';
import type { RoutedCount } from '../listening/request-counts.ts';
import type { LoggedRequest, ResponseFacts } from '../logs/access-log.ts';
import type { ProcessLogLevel } from '../logs/process-log.ts';
import type { AdmissionAnswer, AdmissionRequest } from './admission-messages.ts';

export type WorkerEvent =
  /** Every port listens: configured port → bound port, and `host:port` of each. */
  | { readonly kind: 'listening'; readonly ports: readonly [number, number][]; readonly addresses: string[] }
  /** The worker could not start (a port it cannot bind: `RL_ERR_BIND`). */
  | { readonly kind: 'failed'; readonly message: string; readonly code: string | undefined }
  /** An error-log line, formatted and filtered by level in the worker. */
  | { readonly kind: 'error-log'; readonly line: string }
  | { readonly kind: 'completed'; readonly req: LoggedRequest; readonly facts: ResponseFacts }
  | { readonly kind: 'client-closed'; readonly phase: string }
  | { readonly kind: 'data-path-fault'; readonly callback: CallbackKind }
  | {
      readonly kind: 'log';
      readonly level: ProcessLogLevel;
      readonly message: string;
      readonly fields: Record<string, unknown> | undefined;
    }
  /** Requests routed since the last such event, by server and location. */
  | { readonly kind: 'requests'; readonly counts: readonly RoutedCount[] }
  /** The worker's upstream groups as they are now (each worker balances on its own, as nginx's do). */
  | { readonly kind: 'upstreams'; readonly upstreams: readonly UpstreamInfo[] }
  /** A request waiting for an API limiter or a priority level, which the main thread holds. */
  | { readonly kind: 'admission'; readonly request: AdmissionRequest }
  | TlsSessionRequest;

/** A TLS session to keep, or to look up, in the replica's cache of a port (tls-sessions-desk.ts). */
export type TlsSessionRequest =
  | {
      readonly kind: 'tls-session';
      readonly op: 'store';
      readonly port: number;
      readonly key: string;
      readonly data: Uint8Array;
      readonly timeoutMs: number;
    }
  | {
      readonly kind: 'tls-session';
      readonly op: 'find';
      readonly port: number;
      readonly key: string;
      readonly ask: number;
    };

/** The worker's side: events queued and posted together. */
export class WorkerEventBatch {
  readonly #port: MessagePort;
  #events: WorkerEvent[] = [];

  constructor(port: MessagePort) {
    this.#port = port;
  }

  push(event: WorkerEvent): void {
    if (this.#events.length === 0) setImmediate(() => this.flush());
    this.#events.push(event);
  }

  flush(): void {
    if (this.#events.length === 0) return;
    const events = this.#events;
    this.#events = [];
    this.#port.postMessage(events);
  }
}

/** What the main thread sends a worker. */
export type WorkerCommand =
  | { readonly kind: 'stop'; readonly drainMs: number }
  | { readonly kind: 'admission'; readonly answer: AdmissionAnswer }
  | { readonly kind: 'tls-session'; readonly ask: number; readonly data: Uint8Array | null };
