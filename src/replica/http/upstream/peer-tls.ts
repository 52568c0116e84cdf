/**
 * A forwarded request's TLS (`proxy_pass https://…`) as its connections are made with it: the
 * location's settings with the name this request uses (ngx_http_upstream_ssl_name: `proxy_ssl_name`,
 * else `$proxy_host`, its port left off), and what one connection to a server is made with — the
 * server's last session resumed when `proxy_ssl_session_reuse` is on (one per server, whichever
 * location saved it: nginx's `peer->ssl_session`).
 */
import type { UpstreamTls, UpstreamTlsSettings } from '../contract/upstream-tls.ts';
import { type SavedSession, sniOf, sslName, type TlsConnect } from '../wire/upstream-tls.ts';

export interface PeerTls {
  readonly settings: UpstreamTlsSettings;
  /** The name verified, and sent as SNI when `proxy_ssl_server_name` is on. */
  readonly name: string;
  /** Kept connections are reused only by requests with the same key (and plain ones by none). */
  readonly poolKey: string;
}

/** The request's TLS, its name evaluated now (`proxyHost`: its `$proxy_host`). */
export function peerTls(tls: UpstreamTls, proxyHost: string): PeerTls {
  const name = sslName(tls.name === null ? proxyHost : tls.name());
  return { settings: tls.settings, name, poolKey: `${tls.settings.id} ${name}` };
}

/** Where a server's last TLS session is kept (`UpstreamPeer`). */
export interface SessionHolder {
  tlsSession: SavedSession | undefined;
}

/** What a new connection to `server` is made with. */
export function tlsConnect(tls: PeerTls, server: SessionHolder): TlsConnect {
  const { settings, name } = tls;
  const reuse = settings.sessionReuse;
  return {
    context: settings.context,
    servername: settings.serverName ? sniOf(name) : undefined,
    verify: settings.verifyDepth === null ? null : { name, depth: settings.verifyDepth },
    session: reuse ? server.tlsSession : undefined,
    saveSession: reuse
      ? (saved) => {
          server.tlsSession = saved;
        }
      : null,
  };
}
