/** What a forwarder (forwarder.ts) asks of the exchange it forwards for: the request, and where its answer goes. */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientBodyStream, ClientRequest } from '../contract/client-request.ts';
import type { ClientFault } from '../contract/decision.ts';
import type { UpstreamErrorLevel } from '../contract/exchange-events.ts';
import type { PeerTls } from './peer-tls.ts';
import type { UpgradeHandler } from './upgrade-dispatch.ts';
import type { ExchangeHandler } from './upstream-connection.ts';
import type { UpstreamPeer } from './upstream-group.ts';

/** The forwarder as a send sees it: the handler of the request's way there, its body and connect timeout. */
export type ForwardSending = ExchangeHandler &
  UpgradeHandler & {
    /** The body, when it was read whole before the request went out (its file read afresh); else null. */
    readonly bufferedBody: Buffer | ClientBodyStream | null;
    /** What had come of a body that streams, to leave with the head. */
    readonly preread: Buffer | null;
    /** The location's `proxy_connect_timeout` (absent: the upstream options'). */
    readonly connectTimeoutMs: number | undefined;
    /** TLS to an `https://` upstream; null: plain. */
    readonly tls: PeerTls | null;
    /** `proxy_set_header Connection close`: the request is its connection's last. */
    readonly closesConnection: boolean;
  };

/** What the forwarder asks of the exchange it forwards for. */
export interface ForwardOwner {
  readonly req: ClientRequest;
  /** The client connection's timers of the request's location. */
  readonly timers: ClientTimers;
  /** The exchange is over: nothing more is sent, and failures are not answered. */
  readonly done: boolean;
  /** Still forwarding (a body that finished reading may go out). */
  readonly forwarding: boolean;
  readonly clientSocket: Socket | null;
  /** Sends the request to `peer`, with `forwarder` hearing how it goes. */
  send(
    forwarder: ForwardSending,
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void;
  /** No server answered: nginx's page (502, 504), or the answer cut when its head went out already. */
  upstreamFailed(code: number): void;
  /**
   * The server answered `status` (with `rawHeaders`): true when `proxy_intercept_errors` finalizes the
   * request with it and an `error_page` answers instead (the server's answer dropped).
   */
  intercepted(status: number, rawHeaders: readonly (Buffer | string)[]): boolean;
  /** An upstream failure in nginx's error-log words. */
  report(level: UpstreamErrorLevel, message: string, upstream: string): void;
  /**
   * The client is at fault: `code` is nginx's answer (a closing code when there is none to send),
   * `fault` the log line (null: none). The forwarder abandons the request to the server.
   */
  clientFault(code: number, fault: ClientFault | null): void;
  /** Where the server's answer goes (the exchange's responder). */
  readonly answer: AnswerSink;
  /** The server's answer is complete: the exchange is done. */
  answered(): void;
  /** A 101 (upgrade requests only): the upstream connection is the exchange's now. */
  upstreamUpgraded?(statusText: string, rawHeaders: readonly string[], socket: Socket, head: Buffer): void;
}

/** Where the forwarder hands the server's answer: the exchange's responder (responder.ts). */
export interface AnswerSink {
  /** The head; it waits for the end of the read that brought it (or for the answer's end). */
  upstreamHead(
    status: number,
    statusText: string,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
  ): void;
  /** The read that brought the head (or more of the body) is over: the head goes out. */
  flushHead(): void;
  /** A piece of the body; false: the client takes no more for now (the server's reading pauses). */
  data(chunk: Buffer): boolean;
  complete(): void;
}
