/**
 * What ngx_http_ssl_module decides about a request's TLS connection once the request's server is
 * known (ngx_http_process_request, ngx_http_set_virtual_server): a client certificate it requires and
 * did not get (496), one that failed verification (495), and a `Host` naming another server than the
 * one SNI chose, when that server verifies clients (421). The facts come from the connection.
 */

/** `ssl_verify_client off | on | optional | optional_no_ca`. */
export type SslVerifyClient = 'off' | 'on' | 'optional' | 'optional_no_ca';

/** OpenSSL's verification failure of a client certificate: X509_V_ERR_* number and text. */
export interface VerifyError {
  readonly code: number;
  readonly text: string;
}

/** A connection's client certificate as the handshake left it. */
export interface ClientCertificate {
  /** The client sent a certificate (and the server asked for one). */
  readonly present: boolean;
  /** Why it did not verify; null when it did (or none was sent). */
  readonly error: VerifyError | null;
}

export interface TlsRefusal {
  readonly code: 421 | 495 | 496 | 497;
  /** nginx's error-log text (at `info`). */
  readonly message: string;
}

/**
 * The errors `optional_no_ca` lets through (ngx_ssl_verify_error_optional): a chain that does not end
 * at a CA the server knows, and nothing else.
 */
const OPTIONAL_ERRORS: ReadonlySet<number> = new Set([18, 19, 2, 20, 21]);

/** The refusal for a request on a TLS connection to a server with `mode`, or null. */
export function clientCertificateRefusal(mode: SslVerifyClient, cert: ClientCertificate): TlsRefusal | null {
  if (mode === 'off') return null;
  const error = cert.error;
  if (error !== null && !(mode === 'optional_no_ca' && OPTIONAL_ERRORS.has(error.code))) {
    return { code: 495, message: `client SSL certificate verify error: (${error.code}:${error.text})` };
  }
  if (mode === 'on' && !cert.present)
    return { code: 496, message: 'client sent no required SSL certificate' };
  return null;
}

/**
 * nginx refuses a request whose `Host` is not the name SNI negotiated when the server that `Host`
 * selects verifies client certificates: the certificate was checked for another server.
 */
export function misdirectedRefusal(
  sniName: string | null,
  host: string,
  hostServerMode: SslVerifyClient,
): TlsRefusal | null {
  if (sniName === null || sniName === host || hostServerMode === 'off') return null;
  return {
    code: 421,
    message: 'client attempted to request the server name different from the one that was negotiated',
  };
}
