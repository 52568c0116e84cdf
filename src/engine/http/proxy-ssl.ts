/**
 * The proxy module's `proxy_ssl_*` settings of one location, after inheritance: how a request that
 * goes to an `https://` upstream makes its TLS connection (ngx_http_proxy_merge_loc_conf and
 * ngx_http_upstream_ssl_init_connection in nginx 1.22). Certificates, keys and CRLs are held as the
 * PEM text the configuration read.
 */
import type { VariableGetter } from '../variables/variable-table.ts';

/** The settings as the configuration holds them; `N` is how `proxy_ssl_name` is held. */
export interface ProxySslSettings<N = string> {
  /** `proxy_ssl_verify` (off: the server's certificate is not verified at all). */
  readonly verify: boolean;
  /** `proxy_ssl_verify_depth` (1). */
  readonly verifyDepth: number;
  /** `proxy_ssl_trusted_certificate`: the CAs a verified certificate must chain to; null: none. */
  readonly trustedCertificate: string | null;
  /** `proxy_ssl_crl`: revoked certificates (checked for the whole chain); null: none. */
  readonly crl: string | null;
  /** `proxy_ssl_server_name` (off: no SNI is sent). */
  readonly serverName: boolean;
  /** `proxy_ssl_name`; null: `$proxy_host`. */
  readonly name: N | null;
  /** `proxy_ssl_certificate` and `_key`: the certificate shown to a server that asks for one. */
  readonly certificate: string | null;
  readonly certificateKey: string | null;
  /** `proxy_ssl_password_file`'s lines, each tried on the key; null: none. */
  readonly passwords: readonly string[] | null;
  /** `proxy_ssl_protocols`. */
  readonly protocols: readonly string[];
  /** `proxy_ssl_ciphers`: OpenSSL's cipher list. */
  readonly ciphers: string;
  /** `proxy_ssl_session_reuse`: a connection resumes the session of the last one to the same server. */
  readonly sessionReuse: boolean;
}

/** The settings on the data path: `proxy_ssl_name` compiled. */
export type ProxySsl = ProxySslSettings<VariableGetter>;

/** nginx 1.22's defaults (its proxy_ssl_protocols has no TLSv1.3 unless listed: 1.23.4 added it). */
export const DEFAULT_PROXY_SSL: ProxySslSettings<never> = Object.freeze({
  verify: false,
  verifyDepth: 1,
  trustedCertificate: null,
  crl: null,
  serverName: false,
  name: null,
  certificate: null,
  certificateKey: null,
  passwords: null,
  protocols: Object.freeze(['TLSv1', 'TLSv1.1', 'TLSv1.2']),
  ciphers: 'DEFAULT',
  sessionReuse: true,
});
