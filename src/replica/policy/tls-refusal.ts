/** What refuses a request on a TLS connection once its server is known, before any phase runs. */
import {
  clientCertificateRefusal,
  misdirectedRefusal,
  type TlsRefusal,
} from '../../engine/http/client-verify.ts';
import type { Route } from '../../engine/http/route.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';
import { connectionTls } from '../http/edge/tls-facts.ts';

/**
 * ngx_http_process_request's TLS checks for the request's server: plain HTTP to a TLS address (497), a
 * `Host` other than the negotiated SNI name at a server that verifies clients (421), and the client
 * certificate that server requires (495, 496).
 */
export function tlsRefusal(ctx: DownstreamRequest, route: Route): TlsRefusal | null {
  const tls = connectionTls(ctx.connection);
  if (tls === null) {
    return ctx.connection.plainOnTls ? PLAIN_ON_TLS : null;
  }
  const mode = route.server.clientVerify;
  return misdirectedRefusal(tls.negotiatedName, route.host, mode) ?? clientCertificateRefusal(mode, tls);
}

const PLAIN_ON_TLS: TlsRefusal = Object.freeze({
  code: 497,
  message: 'client sent plain HTTP request to HTTPS port while reading client request headers',
});
