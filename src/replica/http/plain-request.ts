/**
 * A request read by the replica itself (http1-connection.ts), with the part of `IncomingMessage` the
 * exchange, the hook and the logs read: the request line's parts, `rawHeaders`, `headers` (folded by
 * node:http's own rule, lazily, as node:http does) and the socket. It has no body (those are
 * node:http's to read), so it is complete from the start.
 */
import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { PlainHead } from './plain-request-head.ts';

type HeaderFolder = (
  this: { joinDuplicateHeaders: boolean },
  name: string,
  value: string,
  into: Record<string, string | string[]>,
) => void;

/** node:http's duplicate-header rule (joined with ", " or "; ", kept first, or Set-Cookie's list). */
const addHeaderLine = (IncomingMessage.prototype as unknown as { _addHeaderLine: HeaderFolder })
  ._addHeaderLine;
const FOLDING = { joinDuplicateHeaders: false };

export class PlainRequest {
  readonly method: string;
  readonly url: string;
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly rawHeaders: string[];
  readonly socket: Socket;
  readonly complete = true;
  #headers: Record<string, string | string[]> | null = null;

  constructor(head: PlainHead, socket: Socket) {
    this.method = head.method;
    this.url = head.url;
    this.rawHeaders = head.rawHeaders;
    this.socket = socket;
  }

  get headers(): Record<string, string | string[]> {
    if (this.#headers !== null) return this.#headers;
    const headers: Record<string, string | string[]> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) addHeaderLine.call(FOLDING, raw[i]!, raw[i + 1]!, headers);
    this.#headers = headers;
    return headers;
  }

  /** No body flows here: never paused. */
  isPaused(): boolean {
    return false;
  }

  /** Nothing to drain. */
  resume(): this {
    return this;
  }
}
