/**
 * Whether an upstream HTTP/1.1 connection carries another request after a response, and how long it may
 * wait idle for one (undici's client's rules): its own `keepAliveTimeout`, or until 2 s before the
 * server's `Keep-Alive: timeout=n` would close it, so that no request goes out on a connection the
 * server is closing.
 */
import type { Http1Request } from './http1-request.ts';
import type { ResponseHead } from './http1-response.ts';

/** How long before the server's announced idle timeout a connection stops being reused (undici's). */
const KEEP_ALIVE_THRESHOLD_MS = 2000;

/** The connection carries no request after `request`: it is its last, or a HEAD request (as undici does). */
export function lastRequestOn(request: Http1Request): boolean {
  return request.reset === true || request.method === 'HEAD';
}

/** How long the connection may stay idle after `head`'s response; 0 or less: not at all. */
export function idleTimeoutMs(head: ResponseHead, keepAliveTimeoutMs: number): number {
  if (head.keepAliveTimeoutMs === -1) return keepAliveTimeoutMs;
  return Math.min(keepAliveTimeoutMs, head.keepAliveTimeoutMs - KEEP_ALIVE_THRESHOLD_MS);
}

/** The server lets the connection carry another request after `head`'s response, idle `idleMs` at most. */
export function serverKeepsAlive(head: ResponseHead, idleMs: number): boolean {
  return head.keepAlive && idleMs > 0;
}
