/**
 * What nginx counts per client connection for keep-alive (`c->requests`, `c->start_time`), for both
 * readers of HTTP/1 (the replica's own and node:http), and nginx's rule for whether a response may
 * keep its connection (ngx_http_update_location_config): not with `keepalive_timeout 0`, not once the
 * connection carried `keepalive_requests` requests, not once it is older than `keepalive_time`.
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../engine/http/client-timers.ts';

export interface ConnectionFacts {
  /** Requests read on it so far, the current one included. */
  requests: number;
  /** When it was accepted (performance.now(), ms). */
  readonly startedMs: number;
}

const facts = new WeakMap<Socket, ConnectionFacts>();

/** A request was read on `socket`: its count goes up (the first one starts its facts). */
export function countRequest(socket: Socket): void {
  const known = facts.get(socket);
  if (known === undefined) facts.set(socket, { requests: 1, startedMs: performance.now() });
  else known.requests++;
}

/** nginx's rule (above) for the connection's current request under `timers`. */
export function mayKeepAlive(socket: Socket | null, timers: ClientTimers): boolean {
  if (timers.keepaliveTimeoutMs === 0) return false;
  const known = socket === null ? undefined : facts.get(socket);
  if (known === undefined) return true;
  return (
    known.requests < timers.keepaliveRequests && performance.now() - known.startedMs < timers.keepaliveTimeMs
  );
}
