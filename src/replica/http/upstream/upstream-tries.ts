/**
 * The servers one forwarded request tries, in its group: the next one the round robin picks (not one
 * that failed it), the one it is counted on for `max_conns` until its exchange with it ends, and its
 * place in the group's queue (Plus) when no server is free for a first try; each try recorded as
 * nginx's upstream state (try-record.ts).
 */

import { DEFAULT_PROXY_RULES, type ProxyRules } from '../../../engine/http/proxy-rules.ts';
import { loopClock } from '../../../shared/clock.ts';
import type { ProgressRecord } from '../contract/request-progress.ts';
import { NO_LIVE_UPSTREAMS, QUEUE_FULL } from '../wire/upstream-failure.ts';
import { HTTP_SCHEME, type UpstreamScheme } from './forward-headers.ts';
import { TryRecord } from './try-record.ts';
import type { UpstreamGroup, UpstreamPeer } from './upstream-group.ts';
import type { QueuedRequest } from './upstream-queue.ts';

/** No server for this try: the error-log line for it (null: nginx writes none, all were tried). */
export interface NoServer {
  readonly message: string | null;
}

export class UpstreamTries {
  readonly group: UpstreamGroup;
  /** The tries' upstream states (`$upstream_*`); none without a progress record. */
  readonly record: TryRecord | undefined;
  /** The location's `proxy_next_upstream*` rules. */
  readonly rules: ProxyRules;
  /** `http://` or `https://`, as the `proxy_pass` URL has it. */
  readonly scheme: UpstreamScheme;
  /** When the first try began (nginx's `peer.start_time`, for `proxy_next_upstream_timeout`). */
  readonly #startedMs = loopClock.nowMs();
  /** The server of the current try (null before the first). */
  peer: UpstreamPeer | null = null;
  /** The server counted on (`max_conns`) until the exchange with it ends. */
  #holding: UpstreamPeer | null = null;
  /** Servers that failed this request: not picked again. */
  #tried: UpstreamPeer[] | null = null;
  #queued = false;

  constructor(
    group: UpstreamGroup,
    progress?: ProgressRecord,
    rules: ProxyRules = DEFAULT_PROXY_RULES,
    scheme: UpstreamScheme = HTTP_SCHEME,
  ) {
    this.group = group;
    this.rules = rules;
    this.scheme = scheme;
    this.record = progress === undefined ? undefined : new TryRecord(progress, group.name, scheme);
  }

  /** Servers tried so far, the current one included. */
  get count(): number {
    return this.#tried === null ? 1 : this.#tried.length + 1;
  }

  /** ms since the first try began. */
  get elapsedMs(): number {
    return loopClock.nowMs() - this.#startedMs;
  }

  /** The next server, or `queued` (the request waits in the group's queue), or why there is none. */
  next(request: QueuedRequest): UpstreamPeer | 'queued' | NoServer {
    const group = this.group;
    const tried = this.#tried;
    const peer = group.pick(tried);
    if (peer !== null) return peer;
    // A first try that finds no server waits in the group's queue, if it has one (Plus).
    if (tried === null && group.queue !== null) {
      if (!group.enqueue(request)) return { message: QUEUE_FULL };
      this.#queued = true;
      return 'queued';
    }
    // Every server tried (those not `down`, backups too) is nginx's end of tries; servers left but
    // none to take is "no live upstreams", a try of its own named by the group.
    if (tried !== null && tried.length >= group.tries) return { message: null };
    this.record?.noLiveServer(group.name);
    return { message: NO_LIVE_UPSTREAMS };
  }

  /** The queue let the request go: a server, if the group picks one now (else it stays first). */
  dequeued(): UpstreamPeer | null {
    const peer = this.group.pick(null);
    if (peer !== null) this.#queued = false;
    return peer;
  }

  /** The queue's timeout ran out. */
  queueTimedOut(): void {
    this.#queued = false;
  }

  /** The try goes to `peer` (counted on it by the pick, `max_conns`, until `free`). */
  take(peer: UpstreamPeer): void {
    this.#holding = peer;
    this.peer = peer;
    this.record?.started(peer.server);
  }

  /** The exchange with the server is over: its `max_conns` count drops (a queued request may take it). Once. */
  free(): void {
    this.record?.finished();
    const peer = this.#holding;
    if (peer === null) return;
    this.#holding = null;
    this.group.free(peer);
  }

  /** The current server failed the request: not picked again (unless `again`: nginx's one more try). */
  failed(again: boolean): void {
    if (again) return;
    this.#tried ??= [];
    this.#tried.push(this.peer!);
  }

  /** Out of the group's queue, if in it (true then). */
  leaveQueue(request: QueuedRequest): boolean {
    if (!this.#queued) return false;
    this.#queued = false;
    this.group.queue!.leave(request);
    return true;
  }
}
