/**
 * What one failed try of a server writes and counts, as ngx_http_upstream_next does: nginx's error-log
 * line for the failure, the server's failure counted against `max_fails` (with the warning when that
 * takes it out) and the try recorded for `$upstream_status` — only for a failure before the answer's
 * head; once the head arrived the answer is only cut short and the server is not blamed.
 */
import { isUnixAddress } from '../../../engine/net/address-text.ts';
import {
  immediateConnectFailure,
  READING_BODY,
  serverDisabled,
  type UpstreamFailure,
  type UpstreamPhase,
  upstreamErrorMessage,
} from '../wire/upstream-failure.ts';
import { upstreamLogText } from './forward-headers.ts';
import type { ForwardOwner } from './forward-owner.ts';
import type { UpstreamTries } from './upstream-tries.ts';

/** Reports the failure of the current try; true when it came before the answer's head. */
export function reportFailedTry(
  owner: ForwardOwner,
  tries: UpstreamTries,
  failure: UpstreamFailure,
  phase: UpstreamPhase,
  path: string,
): boolean {
  const peer = tries.peer!;
  const timedOut = failure.timedOut;
  const upstream = upstreamLogText(tries.scheme, peer.server, path);
  const beforeHead = phase !== READING_BODY;
  // nginx logs a failure as it meets it, but "upstream timed out" after freeing the server (which
  // warns when that takes the server out)
  if (!timedOut) {
    const atOnce = isUnixAddress(peer.host) ? immediateConnectFailure(failure, peer.server) : null;
    owner.report(atOnce?.level ?? 'error', atOnce?.message ?? upstreamErrorMessage(failure, phase), upstream);
  }
  if (beforeHead && tries.group.markFailed(peer)) owner.report('warn', serverDisabled(phase), upstream);
  if (timedOut) owner.report('error', upstreamErrorMessage(failure, phase), upstream);
  if (beforeHead) tries.record?.failed(timedOut ? 504 : 502);
  return beforeHead;
}
