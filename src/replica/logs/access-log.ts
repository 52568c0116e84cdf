/**
 * nginx's `combined` access-log format:
 * `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`.
 */
import type { ClientRequestHead } from '../http/contract/decision.ts';
import type { ExchangeOutcome } from '../http/contract/exchange-events.ts';
import { timeLocal } from '../http/contract/log-time.ts';

/** What the access log and the latency histogram learn of a finished exchange, in nginx's terms. */
export interface ResponseFacts extends ExchangeOutcome {
  /** `$remote_addr`: the client, after realip. */
  readonly remoteAddr: string;
}

/** What the access log reads of a request (plain data: a worker thread's entries cross to the main thread). */
export type LoggedRequest = Pick<ClientRequestHead, 'method' | 'url' | 'httpVersion'> & {
  readonly headers: { readonly referer?: string | undefined; readonly 'user-agent'?: string | undefined };
};

/** The request's part of an access-log entry, copied out of the request. */
export function loggedRequest(req: ClientRequestHead): LoggedRequest {
  const { referer, 'user-agent': agent } = req.headers;
  return {
    method: req.method,
    url: req.url,
    httpVersion: req.httpVersion,
    headers: {
      ...(referer === undefined ? {} : { referer }),
      ...(agent === undefined ? {} : { 'user-agent': agent }),
    },
  };
}

/** nginx's `combined` log format. */
export function formatAccessLine(req: LoggedRequest, facts: ResponseFacts, now = new Date()): string {
  const referer = req.headers.referer ?? '-';
  const agent = req.headers['user-agent'] ?? '-';
  // HTTP/0.9's simple request (version '') has no version on its line
  const version = req.httpVersion === '' ? '' : ` HTTP/${req.httpVersion}`;
  return `${facts.remoteAddr} - - [${timeLocal(now)}] "${req.method} ${req.url}${version}" ${facts.status} ${facts.bodyBytes} "${referer}" "${agent}"\n`;
}
