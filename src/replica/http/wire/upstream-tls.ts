/**
 * TLS on an upstream connection, as ngx_http_upstream_ssl_init_connection and
 * ngx_http_upstream_ssl_handshake make it: the name (`proxy_ssl_name`, its port left off) sent as SNI
 * unless it is an IP address, no verification at all unless `proxy_ssl_verify` asks for it, and then
 * the chain (to the trusted CAs, within `proxy_ssl_verify_depth`) and the name checked once the
 * handshake is over — a failure is the try's error, in nginx's words.
 */
import { isIP, type OnReadOpts } from 'node:net';
import {
  type ConnectionOptions,
  checkServerIdentity,
  connect,
  type PeerCertificate,
  type SecureContext,
  type TLSSocket,
} from 'node:tls';
import { UpstreamFailure } from './upstream-failure.ts';

/** What one connection's TLS is made with (upstream-connection.ts makes it from the request's). */
export interface TlsConnect {
  readonly context: SecureContext;
  /** The SNI; undefined: none. */
  readonly servername: string | undefined;
  /** `proxy_ssl_verify on`: the name checked and the depth allowed; null: nothing verified. */
  readonly verify: { readonly name: string; readonly depth: number } | null;
  /** The session the last connection to the server saved (`proxy_ssl_session_reuse`). */
  readonly session: SavedSession | undefined;
  readonly saveSession: ((saved: SavedSession) => void) | null;
}

/**
 * A session to resume, with the server's certificate it was made with: a resumed connection is told
 * nothing of the certificate (OpenSSL keeps it in the session; Node shows none), and the name is
 * checked against it as nginx checks a resumed session's.
 */
export interface SavedSession {
  readonly session: Buffer;
  readonly certificate: PeerCertificate;
}

/** ngx_http_upstream_ssl_name: the name as written, its port left off (`$proxy_host` has one). */
export function sslName(name: string): string {
  const from = name.startsWith('[') ? Math.max(name.indexOf(']'), 0) : 0;
  const colon = name.indexOf(':', from);
  return colon === -1 ? name : name.slice(0, colon);
}

/** The SNI for `name`: none for an empty one or an IP address (RFC 6066). */
export function sniOf(name: string): string | undefined {
  if (name === '' || name.startsWith('[') || isIP(name) !== 0) return undefined;
  return name;
}

/** node:tls's options for `tls` (verification is `verifyFailure`'s, after the handshake). */
export function tlsOptions(tls: TlsConnect): ConnectionOptions {
  return {
    secureContext: tls.context,
    servername: tls.servername,
    session: tls.session?.session,
    // verified after the handshake, in nginx's terms, when verification is asked for at all (the
    // name is proxy_ssl_name's, not the host connected to)
    rejectUnauthorized: false,
    checkServerIdentity: () => undefined,
  };
}

/** Starts a TLS connection to `host:port` (the handshake follows; 'secureConnect' when it is over). */
export function connectTls(host: string, port: number, tls: TlsConnect, onread: OnReadOpts): TLSSocket {
  // node:tls reads into `onread` as node:net does (its types leave the option out)
  const options: ConnectionOptions & { readonly onread: OnReadOpts } = {
    host,
    port,
    ...tlsOptions(tls),
    onread,
  };
  const socket = connect(options);
  socket.setNoDelay(true);
  keepSessions(socket, tls);
  return socket;
}

/** The connection's sessions saved for the next connection to the server, with the certificate. */
export function keepSessions(socket: TLSSocket, tls: TlsConnect): void {
  const save = tls.saveSession;
  if (save === null) return;
  socket.on('session', (session: Buffer) => {
    const certificate = peerCertificate(socket, tls);
    if (certificate !== undefined) save({ session, certificate });
  });
}

/** The server's certificate: this connection's, or for a resumed session the one it was made with. */
function peerCertificate(socket: TLSSocket, tls: TlsConnect): PeerCertificate | undefined {
  if (socket.isSessionReused()) return tls.session?.certificate;
  // none once the connection is gone (a session can come after a failed check closed it)
  const certificate = socket.getPeerCertificate() as PeerCertificate | null;
  return certificate?.raw === undefined ? undefined : certificate;
}

/**
 * X509_verify_cert_error_string()'s words for the errors Node names by code (OpenSSL 3), with their
 * numbers, as nginx writes `(%l:%s)`.
 */
const VERIFY_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  UNABLE_TO_GET_ISSUER_CERT: [2, 'unable to get issuer certificate'],
  UNABLE_TO_GET_CRL: [3, 'unable to get certificate CRL'],
  UNABLE_TO_DECRYPT_CERT_SIGNATURE: [4, "unable to decrypt certificate's signature"],
  UNABLE_TO_DECRYPT_CRL_SIGNATURE: [5, "unable to decrypt CRL's signature"],
  UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY: [6, 'unable to decode issuer public key'],
  CERT_SIGNATURE_FAILURE: [7, 'certificate signature failure'],
  CRL_SIGNATURE_FAILURE: [8, 'CRL signature failure'],
  CERT_NOT_YET_VALID: [9, 'certificate is not yet valid'],
  CERT_HAS_EXPIRED: [10, 'certificate has expired'],
  CRL_NOT_YET_VALID: [11, 'CRL is not yet valid'],
  CRL_HAS_EXPIRED: [12, 'CRL has expired'],
  ERROR_IN_CERT_NOT_BEFORE_FIELD: [13, "format error in certificate's notBefore field"],
  ERROR_IN_CERT_NOT_AFTER_FIELD: [14, "format error in certificate's notAfter field"],
  ERROR_IN_CRL_LAST_UPDATE_FIELD: [15, "format error in CRL's lastUpdate field"],
  ERROR_IN_CRL_NEXT_UPDATE_FIELD: [16, "format error in CRL's nextUpdate field"],
  OUT_OF_MEM: [17, 'out of memory'],
  DEPTH_ZERO_SELF_SIGNED_CERT: [18, 'self-signed certificate'],
  SELF_SIGNED_CERT_IN_CHAIN: [19, 'self-signed certificate in certificate chain'],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: [20, 'unable to get local issuer certificate'],
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: [21, 'unable to verify the first certificate'],
  CERT_CHAIN_TOO_LONG: [22, 'certificate chain too long'],
  CERT_REVOKED: [23, 'certificate revoked'],
  INVALID_CA: [24, 'invalid CA certificate'],
  PATH_LENGTH_EXCEEDED: [25, 'path length constraint exceeded'],
  INVALID_PURPOSE: [26, 'unsupported certificate purpose'],
  CERT_UNTRUSTED: [27, 'certificate not trusted'],
  CERT_REJECTED: [28, 'certificate rejected'],
};

function verifyError(code: string): UpstreamFailure {
  const [number, text] = VERIFY_ERRORS[code] ?? [0, code];
  return new UpstreamFailure('handshake', `upstream SSL certificate verify error: (${number}:${text})`);
}

/**
 * The certificates of the verified chain below its trust anchor: the peer's, then each issuer's up to
 * the first self-issued one (which the trusted CAs gave), as OpenSSL counts a chain's depth.
 */
function chainBelowAnchor(socket: TLSSocket): number {
  let cert = socket.getPeerCertificate(true);
  const seen = new Set<object>();
  let count = 0;
  while (cert !== undefined && cert.raw !== undefined && !seen.has(cert)) {
    seen.add(cert);
    const issuer = cert.issuerCertificate;
    if (issuer === undefined || issuer === cert || issuer.fingerprint256 === cert.fingerprint256) break;
    count++;
    cert = issuer;
  }
  return count;
}

/**
 * ngx_http_upstream_ssl_handshake's checks once the handshake is over, when `proxy_ssl_verify` is on:
 * the chain (SSL_get_verify_result, with the depth SSL_CTX_set_verify_depth allows: the peer's
 * certificate and `depth` intermediates below the trusted CA), then the name (X509_check_host).
 * Null when it passes.
 */
export function verifyFailure(socket: TLSSocket, tls: TlsConnect): UpstreamFailure | null {
  const verify = tls.verify;
  if (verify === null) return null;
  if (!socket.authorized) return verifyError(String(socket.authorizationError));
  // a resumed session's chain was verified when it was made
  if (!socket.isSessionReused() && chainBelowAnchor(socket) > verify.depth + 1)
    return verifyError('CERT_CHAIN_TOO_LONG');
  const certificate = peerCertificate(socket, tls);
  if (certificate === undefined || checkServerIdentity(verify.name, certificate) !== undefined)
    return new UpstreamFailure('handshake', `upstream SSL certificate does not match "${verify.name}"`);
  return null;
}

/**
 * OpenSSL's error as nginx's ngx_ssl_error writes it: `error:0A00010B:SSL routines::wrong version
 * number`, and an alert's number after it (`:SSL alert number 40`).
 */
function opensslText(err: Error & { library?: string; reason?: string }): string | null {
  const hex = /error:([0-9A-F]{8}):/.exec(err.message)?.[1];
  if (hex === undefined || err.reason === undefined) return null;
  const alert = /:(SSL alert number \d+)/.exec(err.message)?.[1];
  return `error:${hex}:${err.library ?? ''}::${err.reason}${alert === undefined ? '' : `:${alert}`}`;
}

/**
 * A failure during the handshake in nginx's words (ngx_ssl_handshake): OpenSSL's error
 * (`SSL_do_handshake() failed (SSL: …)`), or the server closing the connection.
 */
export function handshakeFailure(err: Error & { code?: string }): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  const ssl = opensslText(err);
  if (ssl !== null)
    return new UpstreamFailure('handshake', `SSL_do_handshake() failed (SSL: ${ssl})`, err.code ?? '');
  return new UpstreamFailure('handshake', 'peer closed connection in SSL handshake', err.code ?? '');
}
