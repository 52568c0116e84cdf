/**
 * The response as the exchange writes it, whoever carries it: the replica's own HTTP/1.1 writer
 * (inbound/http1-response.ts), node:http's `ServerResponse` (which has these members as they are) or
 * an HTTP/2 stream (inbound/h2-request.ts). The head goes out as a flat list of names and values.
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';

type WriteCallback = (err?: Error | null) => void;

export interface ClientResponse {
  statusCode: number;
  readonly headersSent: boolean;
  /** False: the connection closes after this response (`Connection: close`). */
  shouldKeepAlive: boolean;
  /** The client connection; null once the response let it go (or, pipelined, before it has it). */
  readonly socket: Socket | null;
  /**
   * The request's location's `keepalive_timeout` (how long the connection idles for the next request,
   * the `Keep-Alive: timeout=` sent), where the writer asks (the replica's own).
   */
  idleUnder?(timers: ClientTimers): void;
  /** The head's bytes once made, where the writer knows them (the replica's own): limit_rate counts them. */
  readonly headBytes?: number;
  writeHead(status: number, reason: string, headers: string[]): unknown;
  writeContinue(): void;
  write(chunk: Buffer, callback?: WriteCallback): boolean;
  end(): unknown;
  end(chunk: Buffer | string, callback?: () => void): unknown;
  destroy(): unknown;
  on(event: 'close', listener: () => void): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}
