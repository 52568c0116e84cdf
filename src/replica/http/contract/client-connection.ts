/**
 * One client connection and what the data path knows of it, in one object: its peer, nginx's
 * per-connection counts (`c->requests`, `c->start_time`, the `*N` of its log lines), how TLS went,
 * whether its answer in progress is its last, and the exchange reading its body now.
 *
 * node:http and node:http2 hand requests over with their socket only, so the object is found by
 * socket (`connectionOf`): it sits in one symbol-keyed slot of the socket, written only here. Not in a
 * WeakMap: its entries are ephemerons, which the garbage collector traces apart, and a connection's
 * objects outlived more collections — 22 000 more instructions a connection, 9 % a request on a
 * connection each (`npm run bench:instructions`).
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientCertificate, SslVerifyClient } from '../../../engine/http/client-verify.ts';
import { type NginxAddr, UNIX_PREFIX } from '../../../engine/net/address-text.ts';
import type { TlsFacts } from '../../../engine/variables/request-context.ts';

/** `$remote_addr` and `$remote_port` (0: none, printed empty). */
export interface RemoteAddress {
  readonly text: string;
  readonly port: number;
}

/** The connection's peer, computed once. */
export interface PeerInfo extends RemoteAddress {
  /** The parsed peer when realip is on and the peer is in `set_real_ip_from`; else null. */
  readonly trusted: NginxAddr | null;
}

/** A UNIX-domain client: its socket has no path, so `$remote_addr` is `unix:` and `$remote_port` empty. */
export const UNIX_CLIENT: PeerInfo = Object.freeze({ text: UNIX_PREFIX, port: 0, trusted: null });

/** What the TLS edge noted of the handshake. */
export interface Handshake {
  /** The SNI name when it selected a server by name (nginx's `hc->ssl_servername`), else null. */
  readonly negotiatedName: string | null;
  /** That server's (else the default server's) `ssl_verify_client` and `ssl_verify_depth`. */
  readonly verify: SslVerifyClient;
  readonly verifyDepth: number;
  /** The ClientHello's `cipher_suites` and `supported_groups`, 2 bytes an entry (`$ssl_ciphers`, `$ssl_curves`). */
  readonly offeredCiphers: Buffer;
  readonly offeredGroups: Buffer;
}

/** ngx_http_ssl_module's variables and the client certificate's outcome, read once a request asks. */
export interface ConnectionTls extends TlsFacts, ClientCertificate {
  readonly negotiatedName: string | null;
}

/** The exchange whose request body is being read: told when the client breaks the body. */
export interface BodyReader {
  readonly bodyComplete: boolean;
  /** The body broke (`HPE_…`); false when the exchange is over already (the caller closes). */
  bodyFailed(parserCode: string): boolean;
}

/**
 * The last connection number given: this thread's own, or one word the worker threads of a replica
 * share (shareConnectionNumbers), as nginx's workers share `ngx_connection_counter`.
 */
let connectionSerial: Uint32Array<ArrayBufferLike> = new Uint32Array(1);

/** From now on, connection numbers are counted in `memory` (4 bytes) with the threads sharing it. */
export function shareConnectionNumbers(memory: SharedArrayBuffer): void {
  connectionSerial = new Uint32Array(memory, 0, 1);
}

/** A number for a log line about no connection in reach (not shared with any). */
export function unsharedConnectionNumber(): number {
  return Atomics.add(connectionSerial, 0, 1) + 1;
}

export class ClientConnection {
  readonly socket: Socket;
  /** Set by the listener when it accepts the connection. */
  peer: PeerInfo | null = null;
  /** The listener's `unix:/path` for a UNIX-domain connection (node gives its socket no address). */
  unixAddress: string | null = null;
  /** Requests read on it so far, the current one included. */
  requests = 0;
  /** When its first request was read (performance.now(), ms). */
  startedMs = 0;
  /** A plain HTTP connection to a TLS address (nginx answers its requests with the 497 page). */
  plainOnTls = false;
  handshake: Handshake | null = null;
  /** Read from the TLS socket the first time a request asks (edge/tls-facts.ts). */
  tls: ConnectionTls | null = null;
  /** The answer in progress is its last: nothing read after it is answered. */
  lastAnswered = false;
  /** In its lingering close. */
  lingering = false;
  /** The exchange that has the connection now, while it holds or forwards. */
  exchange: BodyReader | null = null;
  #number = 0;

  constructor(socket: Socket) {
    this.socket = socket;
  }

  /** `$server_addr`: the local address the connection came in on, as nginx prints it. */
  get serverAddr(): string {
    return this.unixAddress ?? this.socket.localAddress ?? '';
  }

  /** nginx's `*N`: given the first time one of its lines is written, so its lines share it. */
  get number(): number {
    if (this.#number === 0) this.#number = unsharedConnectionNumber();
    return this.#number;
  }

  /** A request was read on it. */
  countRequest(): void {
    if (this.requests++ === 0) this.startedMs = performance.now();
  }

  /**
   * nginx's rule for whether the current request's answer may keep the connection
   * (ngx_http_update_location_config): not with `keepalive_timeout 0`, not once it carried
   * `keepalive_requests` requests, not once it is older than `keepalive_time`.
   */
  mayKeepAlive(timers: ClientTimers): boolean {
    if (timers.keepaliveTimeoutMs === 0) return false;
    if (this.requests === 0) return true;
    return (
      this.requests < timers.keepaliveRequests && performance.now() - this.startedMs < timers.keepaliveTimeMs
    );
  }
}

/** The socket's slot for its connection: the only state this project keeps on a socket. */
const CONNECTION = Symbol('limitswitch.connection');

type ConnectionSlot = Socket & { [CONNECTION]?: ClientConnection };

/** The connection of `socket` (made the first time it is asked for). */
export function connectionOf(socket: Socket): ClientConnection {
  const slot: ConnectionSlot = socket;
  let connection = slot[CONNECTION];
  if (connection === undefined) {
    connection = new ClientConnection(socket);
    slot[CONNECTION] = connection;
  }
  return connection;
}

/**
 * `face` is another object that stands for the same connection: node:http2 gives its sessions'
 * requests a stand-in of the socket it was handed.
 */
export function aliasConnection(face: Socket, connection: ClientConnection): void {
  const slot: ConnectionSlot = face;
  slot[CONNECTION] = connection;
}
