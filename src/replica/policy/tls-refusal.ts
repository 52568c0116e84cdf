/** What refuses a request on a TLS connection once its server is known, before any phase runs. */
import {
  clientCertificateRefusal,
  misdirectedRefusal,
  type TlsRefusal,
} from '../../engine/http/client-verify.ts';
import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import type { RequestFacts } from '../../engine/variables/request-context.ts';
import type { Decision, DownstreamRequest } from '../http/contract/decision.ts';
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

/**
 * nginx finalizes a 495, 496 or 497 in ngx_http_process_request, before FIND_CONFIG: the page is
 * answered under the `add_header … always` lines of the server level (a 421 is left as it is: it
 * comes before the request's server is set).
 */
export function underServerHeaders<D extends Decision>(
  decision: D,
  refused: TlsRefusal,
  site: Site,
  route: Route,
  facts: RequestFacts,
  nowMs: number,
): D {
  const server = route.server.handler;
  if (refused.code === 421 || server.addHeaders.length === 0) return decision;
  const atServer: Route = { ...route, handler: server, locationRegex: null };
  const answerHeaders = site.answerHeaders(atServer, facts, nowMs);
  return answerHeaders === null ? decision : { ...decision, answerHeaders };
}
