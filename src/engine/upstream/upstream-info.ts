/**
 * An `upstream` group as a replica reports it (heartbeat, status API, metrics): its servers' load and
 * NGINX Plus's queue. Plain data, so the store carries it and the control plane sums it.
 */

export interface UpstreamPeerInfo {
  /** `host:port` as the config names it. */
  readonly server: string;
  readonly weight: number;
  /** `backup`: taken only when no other server can be (absent: false, as from a replica before it). */
  readonly backup?: boolean;
  /** `unavail`: left out of the rotation after a failure (`fail_timeout`); `down`: marked so. */
  readonly state: 'up' | 'unavail' | 'down';
  /** Requests on the server now (Plus's `active`). */
  readonly active: number;
  /** `max_conns`; 0 when none. */
  readonly maxConns: number;
}

export interface UpstreamQueueInfo {
  /** Requests waiting now (Plus's `size`). */
  readonly size: number;
  /** `queue number` (Plus's `max_size`). */
  readonly maxSize: number;
  /** Turned away because the queue was full (Plus's `overflows`). */
  readonly overflows: number;
  /** Entered the queue; each then was served, timed out or left. */
  readonly queued: number;
  readonly served: number;
  readonly timedOut: number;
  /** Their client went away while they waited. */
  readonly left: number;
  /** Seconds waited, every outcome together. */
  readonly waitedSeconds: number;
}

export interface UpstreamInfo {
  readonly name: string;
  readonly peers: readonly UpstreamPeerInfo[];
  /** Idle connections kept for the group (Plus's `keepalive`). */
  readonly keepalive: number;
  /** Null without `queue`. */
  readonly queue: UpstreamQueueInfo | null;
}
