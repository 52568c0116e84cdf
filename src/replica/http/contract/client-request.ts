/**
 * The request as the exchange sees it, whoever read it: the replica's own HTTP/1.1 reader
 * (inbound/http1-request.ts), node:http's `IncomingMessage` (which has these members as they are) or
 * an HTTP/2 stream (inbound/h2-request.ts). Its head, and its body as a flowing stream.
 */
import type { Socket } from 'node:net';
import type { ClientRequestHead } from './decision.ts';

/** The request body as the data path reads it: a readable's flowing mode, nothing more. */
export interface ClientBodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
  isPaused(): boolean;
  /** The client connection; node:http clears it once the body was read. */
  readonly socket: Socket | null;
}

export interface ClientRequest extends ClientRequestHead, ClientBodyStream {
  readonly socket: Socket;
  /** The whole body arrived. */
  readonly complete: boolean;
}
