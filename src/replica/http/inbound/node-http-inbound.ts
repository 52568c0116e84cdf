/**
 * node:http's reading of the HTTP/1 connections the replica hands it (proxy-server.ts): its server,
 * which never listens itself, takes a connection at the first head the replica's own reader leaves to
 * it (http1-connection.ts), a plain one on a TLS address, and its events start the listener's
 * exchanges: requests in turn, `Expect: 100-continue`, CONNECT, and upgrade requests, tunnelled
 * (an exchange with an upgrade leg: upgrade-leg.ts) or replayed as plain ones (upgrade-replay.ts).
 *
 * Client input nginx refuses is answered as nginx answers it, and never reaches a server: node:http
 * is given room for any head nginx would read (`maxHeaderSize` from the hook's rules, no cap on the
 * header count, no Host check of its own), the hook refuses what nginx refuses of a parsed head, and
 * a head the parser gives up on (too large, a version or syntax it rejects, CONNECT) gets nginx's
 * page, then a lingering close (client-error.ts, lingering-close.ts).
 */
import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import { connectionOf, type PeerInfo } from '../contract/client-connection.ts';
import type { ClientInputRules, Decision } from '../contract/decision.ts';
import { guarded } from '../contract/fault-boundary.ts';
import { isLingering } from '../exchange/lingering-close.ts';
import type { Exchange } from '../exchange/proxy-exchange.ts';
import { answerClientError, type ClientError } from './client-error.ts';
import { replayWithoutUpgrade } from './upgrade-replay.ts';

/** node:http's default `maxHeaderSize` (16 KiB), when no rules set one. */
export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;

/** What node:http's events need of the listener. */
export interface NodeHttpHost<D extends Decision> {
  /** The hook's rules for client input: the largest head, and the answer to one the parser refused. */
  readonly clientInput: ClientInputRules<D> | null;
  /** The address's default server's client timers (read per connection: a reload counts). */
  readonly clientTimers: ClientTimers;
  /** The connection's peer, and whether realip trusts it. */
  peerOf(socket: Socket): PeerInfo;
  /** A request read: its connection counts it, and its exchange starts. */
  exchange(req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean): void;
  /** An upgrade request read: its connection counts it, and its exchange is made (not run yet). */
  upgradeExchange(req: IncomingMessage, res: ServerResponse, head: Buffer): Exchange<D>;
  /** Whether the request's location tunnels the upgrade; null: no location does (none is tunnelled). */
  readonly canTunnel: ((exchange: Exchange<D>) => boolean) | null;
  /** The hook decides, and the exchange carries the decision out. */
  run(exchange: Exchange<D>): void;
}

/**
 * node:http emits a pipelined request as soon as it has read it, while the answer before it is still
 * in progress; nginx reads a connection's next request only once its answer is out. So a request runs
 * when its response is given the connection (node:http queues the responses): after the answer before
 * it, and never if that answer ended the connection (a refusal that closes it: nginx never reads what
 * follows). False: `run` is called then instead.
 */
function inTurn(
  req: IncomingMessage,
  res: ServerResponse,
  run: (req: IncomingMessage, res: ServerResponse) => void,
): boolean {
  if (res.socket !== null) return true;
  res.once(
    'socket',
    guarded(
      'client',
      () => run(req, res),
      () => req.socket,
    ),
  );
  return false;
}

export class NodeHttpInbound<D extends Decision> {
  readonly server: Server;
  readonly #host: NodeHttpHost<D>;
  /** Connections taken by an upgrade request: in its exchange, then in its tunnel. */
  readonly #upgrading = new Set<Socket>();

  constructor(host: NodeHttpHost<D>) {
    this.#host = host;
    this.server = createServer(
      {
        noDelay: true,
        requestTimeout: 0,
        headersTimeout: host.clientTimers.headerTimeoutMs,
        // node:http checks head timeouts this often (its default, 30 s, made 60 s up to 90 s)
        connectionsCheckingInterval: 1000,
        // nginx's own checks decide (the hook): HTTP/1.1 without Host is its 400, with its page
        requireHostHeader: false,
        maxHeaderSize: host.clientInput?.maxHeaderBytes(),
      },
      guarded('client', this.#onRequest, (req: IncomingMessage) => req.socket),
    );
    // nginx passes every header line on; the head's size is bounded by maxHeaderSize
    this.server.maxHeadersCount = 0;
    this.server.keepAliveTimeout = host.clientTimers.keepaliveTimeoutMs;
    // before node:http's own listener, which reads maxHeaderSize for the connection's parser
    this.server.prependListener('connection', this.#perConnection);
    // node:http calls these from its reads of a client connection: a throw ends that connection
    const socketOf = (req: IncomingMessage) => req.socket;
    this.server.on(
      'connection',
      guarded('client', this.#onConnection, (socket: Socket) => socket),
    );
    this.server.on(
      'clientError',
      guarded('client', this.#onClientError, (_err, socket: Socket) => socket),
    );
    this.server.on('checkContinue', guarded('client', this.#onCheckContinue, socketOf));
    // another expectation is a request like any other: nginx ignores it (node:http would answer 417
    // and read the connection on, where nginx may refuse the request and close)
    this.server.on('checkExpectation', guarded('client', this.#onRequest, socketOf));
    this.server.on('connect', guarded('client', this.#onConnect, socketOf));
    if (host.canTunnel !== null) this.server.on('upgrade', guarded('client', this.#onUpgrade, socketOf));
  }

  /** node:http reads the connection from here on (node documents emitting 'connection' for it). */
  take(socket: Socket): void {
    this.server.emit('connection', socket);
  }

  /** node:http tracks the connections it is given (idle close, header timeouts) from its 'listening'. */
  listening(): void {
    this.server.emit('listening');
  }

  /** Ends the connections upgrade requests took that are not closed yet (a forced close). */
  destroyUpgrading(): void {
    for (const socket of this.#upgrading) socket.destroy();
  }

  /** node:http reads these per connection (a reload counts for the connections after it). */
  #perConnection = (): void => {
    const server = this.server as Server & { maxHeaderSize?: number };
    const clientInput = this.#host.clientInput;
    if (clientInput !== null) server.maxHeaderSize = clientInput.maxHeaderBytes();
    const timers = this.#host.clientTimers;
    server.headersTimeout = timers.headerTimeoutMs;
    server.keepAliveTimeout = timers.keepaliveTimeoutMs;
  };

  #onConnection = (socket: Socket): void => {
    const connection = connectionOf(socket);
    connection.peer ??= this.#host.peerOf(socket);
  };

  /** node:http could not read a request, or the connection failed (client-error.ts). */
  #onClientError = (err: ClientError, socket: Socket): void => {
    answerClientError(err, socket, this.#host.clientInput, this.#host.clientTimers);
  };

  /** `Expect: 100-continue`: the exchange says when to go on (never for a refusal). */
  #onCheckContinue = (req: IncomingMessage, res: ServerResponse): void => {
    if (!inTurn(req, res, this.#onCheckContinue)) return;
    this.#host.exchange(req, res, true);
  };

  /** CONNECT: node:http hands the connection over; nginx refuses the method (the hook says how). */
  #onConnect = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    void head;
    socket.on('error', destroyOnError);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', endConnection);
    this.#host.exchange(req, res);
  };

  #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (!inTurn(req, res, this.#onRequest)) return;
    if (isLingering(req.socket)) {
      // behind an answer that closes the connection: nginx reads no more requests
      req.resume();
      return;
    }
    this.#host.exchange(req, res);
  };

  #onUpgrade = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    // The parser is gone from this connection: answers go out through a response of our own, and
    // the connection closes after it (unless it becomes a tunnel).
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    const exchange = this.#host.upgradeExchange(req, res, head);
    // a chunked body is node:http's to decode: such a request goes on as a plain one
    const upgrades = req.headers['transfer-encoding'] === undefined && this.#host.canTunnel!(exchange);
    if (!upgrades) {
      res.detachSocket(socket);
      replayWithoutUpgrade(this.server, req, socket, head);
      return;
    }
    res.once('finish', endConnection);
    // Node took its own error listener off with the parser: a reset must not become an uncaught error.
    socket.on('error', destroyOnError);
    this.#upgrading.add(socket);
    socket.once('close', () => this.#upgrading.delete(socket));
    this.#host.run(exchange);
  };
}

function destroyOnError(this: Socket): void {
  this.destroy();
}

/** A response of an upgrade request that did not become a tunnel: the connection ends with it. */
function endConnection(this: ServerResponse): void {
  this.socket?.destroySoon();
}
