/**
 * A request sent on one of its server's own HTTP/1.1 connections (upgrade requests go on one of their
 * own: upgrade-dispatch.ts): the body read whole first, or the client's stream, as the forwarder has it.
 */
import type { ClientRequest } from '../contract/client-request.ts';
import type { ForwardSending } from './forward-owner.ts';
import type { UpstreamPeer } from './upstream-group.ts';

export function sendToPeer(
  forwarder: ForwardSending,
  peer: UpstreamPeer,
  req: ClientRequest,
  hasBody: boolean,
  path: string,
  headers: string[],
  readTimeoutMs: number | undefined,
): void {
  peer.dispatch(
    {
      path,
      method: req.method ?? 'GET',
      headers,
      body: hasBody ? (forwarder.bufferedBody ?? req) : null,
      preread: forwarder.preread,
      headersTimeout: readTimeoutMs,
      bodyTimeout: readTimeoutMs,
      reset: forwarder.closesConnection,
    },
    forwarder,
    forwarder.connectTimeoutMs,
    forwarder.tls,
  );
}
