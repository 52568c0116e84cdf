/**
 * ngx_http_ssl_module's settings: what the `ssl_*` directives set at the http and server levels,
 * nginx's defaults, and the merge into a server's {@link SslConf} (the innermost level that sets one
 * wins; a level's `ssl_certificate` list replaces the enclosing one, each paired in order with its
 * `ssl_certificate_key`, as nginx pairs them).
 *
 * Certificate and key files are read when the configuration is read, as nginx reads them at
 * `nginx -t`: a missing or unusable file fails the load with its `file:line`, and a reload (SIGHUP)
 * reads them again — which is how a certificate changes without a restart.
 */
import { createSecureContext } from 'node:tls';
import { ConfigError, configError } from './config-error.ts';
import type { SourceRef, SslCertificate, SslConf, SslSessionCache, SslVerifyClient } from './model.ts';

/** A certificate or key file as read: its path as written, its text, where it was named. */
export interface SslFile {
  readonly path: string;
  readonly pem: string;
  readonly source: SourceRef;
}

/** The `ssl_*` settings of one level; null: not set here. */
export interface SslBuilder {
  certificates: SslFile[] | null;
  certificateKeys: SslFile[] | null;
  protocols: string[] | null;
  ciphers: string | null;
  preferServerCiphers: boolean | null;
  sessionCache: SslSessionCache | null;
  sessionTimeoutS: number | null;
  sessionTickets: boolean | null;
  clientCertificate: SslFile | null;
  verifyClient: SslVerifyClient | null;
  verifyDepth: number | null;
  ecdhCurve: string | null;
  dhparam: SslFile | null;
  http2: boolean | null;
}

export function newSslBuilder(): SslBuilder {
  return {
    certificates: null,
    certificateKeys: null,
    protocols: null,
    ciphers: null,
    preferServerCiphers: null,
    sessionCache: null,
    sessionTimeoutS: null,
    sessionTickets: null,
    clientCertificate: null,
    verifyClient: null,
    verifyDepth: null,
    ecdhCurve: null,
    dhparam: null,
    http2: null,
  };
}

/**
 * nginx's defaults (ngx_http_ssl_module.c): 1.22's, but for `ssl_protocols`, whose default took
 * TLSv1.3 in nginx 1.23.4 (1.22: TLSv1 TLSv1.1 TLSv1.2) — a TLS server without TLSv1.3 by default
 * is not one to copy.
 */
export const SSL_DEFAULTS = Object.freeze({
  protocols: Object.freeze(['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']),
  ciphers: 'HIGH:!aNULL:!MD5',
  preferServerCiphers: false,
  sessionCache: 'none' as SslSessionCache,
  sessionTimeoutS: 300,
  sessionTickets: true,
  verifyClient: 'off' as SslVerifyClient,
  verifyDepth: 1,
  ecdhCurve: 'auto',
});

/**
 * The `ssl_*` settings in force at a server (its block at `at`), given its own and the http level's.
 * A server without certificates makes no TLS context of its own, so nginx checks nothing more of it
 * (ngx_http_ssl_merge_srv_conf returns early): its `ssl_verify_client` still decides its requests,
 * on handshakes the address's default server makes.
 */
export function mergeSsl(server: SslBuilder, http: SslBuilder, at: SourceRef): SslConf {
  const pick = <K extends keyof SslBuilder>(key: K): SslBuilder[K] => server[key] ?? http[key];
  // the certificate list and its keys come from one level, as ngx_conf_merge_ptr_value takes them
  const own = server.certificates !== null;
  const certificates = (own ? server.certificates : http.certificates) ?? [];
  const keys = (own ? server.certificateKeys : http.certificateKeys) ?? [];
  const verifyClient = pick('verifyClient') ?? SSL_DEFAULTS.verifyClient;
  const clientCertificate = pick('clientCertificate');
  const needsCa = verifyClient === 'on' || verifyClient === 'optional';
  if (needsCa && clientCertificate === null && certificates.length !== 0) {
    // nginx names no line here; the server's block is where it is to be fixed
    throw configError('no ssl_client_certificate for ssl_verify_client', at);
  }
  return {
    certificates: pairCertificates(certificates, keys),
    protocols: pick('protocols') ?? SSL_DEFAULTS.protocols,
    ciphers: pick('ciphers') ?? SSL_DEFAULTS.ciphers,
    preferServerCiphers: pick('preferServerCiphers') ?? SSL_DEFAULTS.preferServerCiphers,
    sessionCache: pick('sessionCache') ?? SSL_DEFAULTS.sessionCache,
    sessionTimeoutS: pick('sessionTimeoutS') ?? SSL_DEFAULTS.sessionTimeoutS,
    sessionTickets: pick('sessionTickets') ?? SSL_DEFAULTS.sessionTickets,
    clientCertificate: clientCertificate?.pem ?? null,
    verifyClient,
    verifyDepth: pick('verifyDepth') ?? SSL_DEFAULTS.verifyDepth,
    ecdhCurve: pick('ecdhCurve') ?? SSL_DEFAULTS.ecdhCurve,
    dhparam: pick('dhparam')?.pem ?? null,
    http2: pick('http2') ?? false,
  };
}

/** Each certificate with its key; nginx: `no "ssl_certificate_key" is defined for certificate "…"`. */
function pairCertificates(certificates: readonly SslFile[], keys: readonly SslFile[]): SslCertificate[] {
  return certificates.map((cert, i) => {
    const key = keys[i];
    if (key === undefined)
      throw configError(`no "ssl_certificate_key" is defined for certificate "${cert.path}"`, cert.source);
    try {
      createSecureContext({ cert: cert.pem, key: key.pem });
    } catch (err) {
      throw configError(
        `cannot load certificate key "${key.path}": PEM_read_bio_PrivateKey() failed (SSL: ${(err as Error).message})`,
        key.source,
      );
    }
    return { certPath: cert.path, keyPath: key.path, cert: cert.pem, key: key.pem };
  });
}

/**
 * ngx_http_ssl_init's check of a TLS address: its default server makes the handshake, so it needs a
 * certificate (a server SNI picks without one makes its handshakes with the default server's, as in
 * nginx).
 */
export function checkSslDefaultServer(server: { readonly ssl: SslConf; readonly source: SourceRef }): void {
  if (server.ssl.certificates.length !== 0) return;
  const at = server.source;
  throw new ConfigError(
    `no "ssl_certificate" is defined for the "listen ... ssl" directive in ${at.file}:${at.line}`,
    at.file,
    0,
  );
}
