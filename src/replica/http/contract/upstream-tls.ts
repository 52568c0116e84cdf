/**
 * How a request's connections to its servers speak TLS (`proxy_pass https://…`): the location's
 * `proxy_ssl_*` settings made ready once (`UpstreamTlsSettings`, by the policy), and the name this
 * request verifies and sends as SNI.
 */
import type { SecureContext } from 'node:tls';

/** One location's `proxy_ssl_*`, made once per configuration. */
export interface UpstreamTlsSettings {
  /** Protocols, ciphers, the client certificate, the trusted CAs and CRL. */
  readonly context: SecureContext;
  /** `proxy_ssl_server_name`: the name goes as SNI. */
  readonly serverName: boolean;
  /** `proxy_ssl_verify on`: the chain's longest allowed depth (`proxy_ssl_verify_depth`); null: off. */
  readonly verifyDepth: number | null;
  /**
   * `proxy_ssl_session_reuse`: a new connection resumes the last session saved for its server (by any
   * location's requests, as nginx keeps one per server), and saves its own.
   */
  readonly sessionReuse: boolean;
  /** Tells these settings apart: connections made with others are not reused for them (keepalive). */
  readonly id: number;
}

/** A request's TLS to its servers: the settings, and `proxy_ssl_name`'s value (null: `$proxy_host`). */
export interface UpstreamTls {
  readonly settings: UpstreamTlsSettings;
  readonly name: (() => string) | null;
}
