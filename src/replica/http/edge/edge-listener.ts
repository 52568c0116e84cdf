/**
 * The listening socket of an address that is `ssl` or `http2`: it looks at a connection's first
 * bytes and hands it on — a TLS ClientHello to the TLS server of the `server` its SNI name selects,
 * the HTTP/2 preface to the h2 session handler (h2c with prior knowledge, which nginx 1.25.1+ takes
 * on a plain `http2` address), anything else to HTTP/1.x — or, on a TLS address, to nginx's 497 page
 * ("The plain HTTP request was sent to HTTPS port").
 *
 * One node:tls server per `server` block, none of them listening: SNI is read from the ClientHello
 * (client-hello.ts) and the connection goes to the selected server's, whose context has that
 * server's certificates (one per key type), client CA and verify mode, and the default server's
 * protocols, ciphers and session settings — what nginx's servername callback switches, and what it
 * keeps. (Node's own SNI callback swaps one certificate only, and never the verify mode.) ALPN picks
 * h2 or HTTP/1.1 on the address.
 *
 * Certificates change in place: `update()` takes the new servers; connections already open keep what
 * they were made with, new handshakes use the new settings.
 */
import { createHmac } from 'node:crypto';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import type { ServerConf } from '../../../config/model.ts';
import { ServerSelector } from '../../../engine/http/find-server.ts';
import { connectionOf } from '../contract/client-connection.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import {
  CLIENT_HELLO_MAX_BYTES,
  type ClientHelloFacts,
  INCOMPLETE,
  readClientHello,
} from './client-hello.ts';
import { certificateOptions, handshakeOptions } from './tls-contexts.ts';
import { localSessions, type TlsSessionBackend, TlsSessions } from './tls-sessions.ts';

export interface EdgeConf {
  /** The configured port (server selection works on it). */
  readonly port: number;
  readonly ssl: boolean;
  readonly http2: boolean;
  /** The servers listening on the port. */
  readonly servers: readonly ServerConf[];
  /**
   * What each server's session ticket keys are made from, the same in every worker thread of a
   * replica, so that a ticket one worker issued resumes at another (nginx's workers share their
   * SSL_CTX's keys); absent: node's random keys per server.
   */
  readonly ticketKeySeed?: Uint8Array;
  /** Where `ssl_session_cache` keeps sessions (absent: a cache of this listener's own). */
  readonly sessions?: TlsSessionBackend;
}

export interface EdgeHandlers {
  /** An HTTP/1.x connection, plain or TLS. */
  readonly http1: (socket: Socket) => void;
  /** An HTTP/2 connection (h2 over TLS, or h2c). */
  readonly http2: (socket: Socket) => void;
  /** Plain HTTP on a TLS address. */
  readonly plainOnTls: (socket: Socket) => void;
  /** A handshake that failed, in nginx's error-log words (at `info`). */
  readonly handshakeFailed: (message: string, socket: Socket) => void;
}

/** What the edge keeps of a hello until its handshake completes. */
interface HelloNoted {
  /** The name SNI selected a server by (null: none). */
  readonly name: string | null;
  readonly ciphers: Buffer;
  readonly groups: Buffer;
}

const NOTHING: Buffer = Buffer.alloc(0);
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const TLS_HANDSHAKE_RECORD = 0x16;
/** nginx's `ssl_handshake_timeout` (60 s). */
const HANDSHAKE_TIMEOUT_MS = 60_000;
/**
 * The most read before the ClientHello is whole: twice the longest hello OpenSSL takes, room for the
 * record headers of any split but one into records of under five bytes (no real client's; the
 * default server's TLS server then reads it).
 */
const HELLO_READ_MAX_BYTES = CLIENT_HELLO_MAX_BYTES * 2;

export class EdgeListener {
  readonly server: NetServer;
  readonly #handlers: EdgeHandlers;
  #conf: EdgeConf;
  #selector: ServerSelector<ServerConf>;
  /** The TLS server of each `server` block, made at its first handshake. */
  #tls = new Map<ServerConf, TlsServer>();
  /** What the hello said, per connection between hello and secure. */
  readonly #hellos = new Map<string, HelloNoted>();
  readonly #sessions: TlsSessions;

  constructor(conf: EdgeConf, handlers: EdgeHandlers) {
    this.#handlers = handlers;
    this.#conf = conf;
    this.#selector = new ServerSelector(conf.servers);
    this.#sessions = new TlsSessions(conf.sessions ?? localSessions());
    this.server = createNetServer({ noDelay: true }, this.#onConnection);
    this.update(conf);
  }

  /** A new configuration's servers and certificates for new handshakes (SIGHUP, a Secret change). */
  update(conf: EdgeConf): void {
    this.#conf = conf;
    this.#selector = new ServerSelector(conf.servers);
    this.#tls = new Map();
    if (!conf.ssl) return;
    const ssl = this.#selector.defaultServer('', conf.port)!.ssl;
    this.#sessions.configure(
      ssl.sessionCache === 'builtin' || ssl.sessionCache === 'shared',
      ssl.sessionTimeoutS,
    );
  }

  #onConnection = (socket: Socket): void => {
    socket.on('error', destroyOnError);
    // a client that never finishes its first bytes is not kept (nginx: client_header_timeout, or
    // ssl_handshake_timeout); whoever takes the connection sets its own timeouts
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, destroyOnError);
    let bytes: Buffer | null = null;
    const onData = (chunk: Buffer): void => {
      try {
        failpoint('client');
        bytes = bytes === null ? chunk : Buffer.concat([bytes, chunk]);
        this.#firstBytes(socket, onData, bytes);
      } catch (error) {
        containFault('client', error, socket, socket);
      }
    };
    socket.on('data', onData);
  };

  /** Hands the connection on once its first bytes say to whom (a TLS server, h2, HTTP/1). */
  #firstBytes(socket: Socket, onData: (chunk: Buffer) => void, bytes: Buffer): void {
    if (this.#conf.ssl && bytes[0] === TLS_HANDSHAKE_RECORD) {
      const hello = readClientHello(bytes);
      if (hello === INCOMPLETE && bytes.length <= HELLO_READ_MAX_BYTES) return;
      this.#handOver(socket, onData, bytes);
      const known = hello === INCOMPLETE ? null : hello;
      if (known?.pskIdentity)
        socket.once('close', this.#sessions.expectTicket(known.sessionId, known.pskIdentity));
      this.#handshake(socket, known);
      return;
    }
    this.#handOver(socket, onData, bytes);
    if (this.#conf.ssl) this.#handlers.plainOnTls(socket);
    else if (this.#conf.http2 && startsWithPreface(bytes)) {
      // the h2 session reads what is buffered itself
      this.#handlers.http2(socket);
      return;
    } else this.#handlers.http1(socket);
    socket.resume();
  }

  /** The bytes read so far go back into the socket for whoever reads it next. */
  #handOver(socket: Socket, onData: (chunk: Buffer) => void, bytes: Buffer): void {
    socket.setTimeout(0);
    socket.off('data', onData);
    socket.pause();
    socket.unshift(bytes);
  }

  /** ngx_http_ssl_servername: the named server's TLS server, else the address's default server's. */
  #handshake(socket: Socket, hello: ClientHelloFacts | null): void {
    const address = socket.localAddress ?? '';
    const host = hello?.serverName?.toLowerCase() ?? '';
    const named = host === '' ? null : this.#selector.named(address, this.#conf.port, host);
    const fallback = this.#selector.defaultServer(address, this.#conf.port)!;
    // a named server without certificates has no TLS context of its own: the default server's
    // makes the handshake (nginx leaves its SSL_CTX in place), the named one still takes the requests
    const server = named !== null && named.ssl.certificates.length !== 0 ? named : fallback;
    if (server.ssl.certificates.length === 0) {
      this.#handlers.handshakeFailed(
        'no "ssl_certificate" is defined in server listening on SSL port while SSL handshaking',
        socket,
      );
      socket.destroy();
      return;
    }
    let tls = this.#tls.get(server);
    if (tls === undefined) {
      tls = this.#createTls(server);
      this.#tls.set(server, tls);
    }
    // what SNI selected and the client offered, read back once the TLS socket that wraps this one is
    // secure (by the peer's address and port, which the two share: node links them by no public member)
    const key = peerKey(socket);
    this.#hellos.set(key, {
      name: named === null ? null : host,
      // copies: the hello's bytes are views of the connection's first read
      ciphers: Buffer.from(hello?.cipherSuites ?? NOTHING),
      groups: Buffer.from(hello?.supportedGroups ?? NOTHING),
    });
    socket.once('close', () => this.#hellos.delete(key));
    tls.emit('connection', socket);
  }

  #createTls(server: ServerConf): TlsServer {
    const fallback = this.#selector.defaultServer('', this.#conf.port)!;
    const tls = createTlsServer({
      ...handshakeOptions(fallback.ssl),
      ...certificateOptions(server.ssl),
      ALPNProtocols: this.#conf.http2 ? ['h2', 'http/1.1'] : ['http/1.1'],
      ...ticketKeysOf(this.#conf, server),
      requestCert: server.ssl.verifyClient !== 'off',
      // nginx verifies per request (tls-facts.ts, client-verify.ts): the handshake always completes
      rejectUnauthorized: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    tls.on('secureConnection', (socket: TLSSocket) => {
      try {
        failpoint('tls');
        this.#secured(server, socket);
      } catch (error) {
        containFault('tls', error, socket, socket);
      }
    });
    tls.on('tlsClientError', (err: Error & { reason?: string }, socket: TLSSocket) => {
      try {
        this.#handlers.handshakeFailed(
          `SSL_do_handshake() failed (SSL: ${err.reason ?? err.message}) while SSL handshaking`,
          socket,
        );
      } catch (error) {
        containFault('tls', error, socket, socket);
      }
    });
    tls.on('newSession', (id: Buffer, data: Buffer, done: () => void) => {
      this.#sessions.store(id, data);
      done();
    });
    tls.on('resumeSession', (id: Buffer, done: (err: Error | null, data: Buffer | null) => void) =>
      this.#sessions.find(id, (data) => done(null, data)),
    );
    return tls;
  }

  /** A handshake completed: the connection goes to HTTP/2 or HTTP/1 as ALPN said. */
  #secured(server: ServerConf, socket: TLSSocket): void {
    const key = peerKey(socket);
    const hello = this.#hellos.get(key);
    this.#hellos.delete(key);
    connectionOf(socket).handshake = {
      negotiatedName: hello?.name ?? null,
      verify: server.ssl.verifyClient,
      verifyDepth: server.ssl.verifyDepth,
      offeredCiphers: hello?.ciphers ?? NOTHING,
      offeredGroups: hello?.groups ?? NOTHING,
    };
    if (socket.alpnProtocol === 'h2') this.#handlers.http2(socket);
    else this.#handlers.http1(socket);
  }
}

/** The server's 48 bytes of ticket keys (name, HMAC and AES keys) from the replica's seed. */
function ticketKeysOf(conf: EdgeConf, server: ServerConf): { ticketKeys?: Buffer } {
  if (conf.ticketKeySeed === undefined) return {};
  const which = `${conf.port}/${conf.servers.indexOf(server)}`;
  return { ticketKeys: createHmac('sha384', conf.ticketKeySeed).update(which).digest() };
}

function peerKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

function startsWithPreface(first: Buffer): boolean {
  const n = Math.min(first.length, H2_PREFACE.length);
  return n >= 3 && first.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
}

function destroyOnError(this: Socket): void {
  this.destroy();
}
