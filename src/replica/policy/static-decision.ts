/**
 * The content phase of a location that neither proxies nor returns, as the data path's decision:
 * nginx's static and index modules (http/static/) on the request's URI. An index found is an
 * internal redirect: the request is routed again under its new URI (`redirect`).
 */

import { closeSync } from 'node:fs';
import type { AnswerHeaders } from '../../engine/http/add-headers.ts';
import type { Route } from '../../engine/http/route.ts';
import type { StaticFiles } from '../../engine/http/static-files.ts';
import type { RequestContext } from '../../engine/variables/request-context.ts';
import type { Decision, DownstreamRequest, FileDecision } from '../http/contract/decision.ts';
import { connectionTls } from '../http/edge/tls-facts.ts';
import { contentTypeOf } from '../http/static/document-path.ts';
import { fileAnswer } from '../http/static/file-answer.ts';
import { type StaticOutcome, staticContent } from '../http/static/static-content.ts';
import type { ErrorLog } from '../logs/error-log.ts';
import { requestLogContext } from '../logs/error-log.ts';

export interface StaticDeciding {
  readonly route: Route;
  readonly ctx: DownstreamRequest;
  readonly errorLog: ErrorLog;
  /** The `listen` port (a redirect's `Location` names it unless it is the scheme's own). */
  readonly port: number;
  /** The method the request goes on with (an error page's GET); absent: the request's. */
  readonly method?: string;
  /** The location's `add_header` lines bound to the request (null or absent: none). */
  readonly answerHeaders?: AnswerHeaders | null;
  /** The request's variables, for `index` names with variables (absent: the location has none). */
  readonly variables?: RequestContext;
}

export function staticDecision<D extends Decision>(
  deciding: StaticDeciding,
  redirect: (uri: string) => D,
): Decision | D {
  const { route, ctx } = deciding;
  const client = route.handler.client;
  const answerHeaders = deciding.answerHeaders ?? null;
  const method = deciding.method ?? ctx.req.method ?? 'GET';
  const files = indexNames(route.handler.files, deciding.variables);
  const outcome: StaticOutcome = staticContent(files, { method, ...route.target });
  switch (outcome.kind) {
    case 'page':
      if (outcome.log !== null)
        deciding.errorLog.request(outcome.log, requestLogContext(ctx, route.serverName));
      return { action: 'return', code: outcome.code, client, answerHeaders };
    case 'directory':
      return {
        action: 'return',
        code: 301,
        headers: { location: absoluteLocation(deciding, outcome.location) },
        client,
        answerHeaders,
      };
    case 'internal':
      return redirect(outcome.uri);
    case 'file': {
      const answer = fileAnswer((name) => firstHeader(ctx.req.rawHeaders, name), {
        size: outcome.size,
        mtimeS: outcome.mtimeS,
        contentType: contentTypeOf(route.handler.files, route.target.uri),
      });
      const sendsBody = answer.body !== null && answer.body.length !== 0 && method !== 'HEAD';
      if (!sendsBody) closeSync(outcome.fd);
      if (answer.body === null) {
        // nginx's page for 412 and 416, with the fields the filter set (416's Content-Range)
        const headers: Record<string, string> = {};
        for (let i = 0; i < answer.headers.length; i += 2)
          headers[answer.headers[i]!] = answer.headers[i + 1]!;
        return answer.headers.length === 0
          ? { action: 'return', code: answer.status, client, answerHeaders }
          : { action: 'return', code: answer.status, headers, client, answerHeaders };
      }
      const decision: FileDecision = {
        action: 'file',
        status: answer.status,
        headers: answer.headers,
        fd: sendsBody ? outcome.fd : -1,
        body: sendsBody ? answer.body : null,
        client,
        answerHeaders,
      };
      return decision;
    }
  }
}

/** ngx_http_index_handler: each name with variables evaluated for the request. */
function indexNames(files: StaticFiles, ctx: RequestContext | undefined): StaticFiles {
  const values = files.indexValues;
  if (values === undefined || ctx === undefined) return files;
  return { ...files, index: files.index.map((name, i) => values[i]?.(ctx) ?? name) };
}

/** The first value of a request header (nginx 1.22 keeps the first of a repeated one). */
function firstHeader(raw: readonly string[], lowerName: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === lowerName) return raw[i + 1]!;
  return undefined;
}

/**
 * The header filter's redirect (ngx_http_header_filter): with `absolute_redirect` on (nginx's
 * default) a `Location` starting with `/` gets the scheme, the host — the server's first name with
 * `server_name_in_redirect` on, else the request's, else the local address — and, with
 * `port_in_redirect` on, the port unless it is the scheme's own; off, it goes as it is.
 */
export function absoluteLocation(deciding: StaticDeciding, path: string): string {
  const { route, ctx } = deciding;
  const client = route.handler.client;
  if (!client.absoluteRedirect) return path;
  const tls = connectionTls(ctx.connection) !== null;
  const host = client.serverNameInRedirect
    ? route.serverName
    : ctx.host === ''
      ? ctx.connection.serverAddr
      : route.host;
  // a UNIX-domain address has no port (0) to name
  const own = deciding.port === 0 || deciding.port === (tls ? 443 : 80);
  const port = !client.portInRedirect || own ? '' : `:${deciding.port}`;
  return `${tls ? 'https' : 'http'}://${host}${port}${path}`;
}
