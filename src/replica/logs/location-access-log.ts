/**
 * nginx's log phase for `access_log`: a request's route and facts are noted when it is decided, and
 * once its answer is out (or its client gone) the lines of its location's `access_log`s
 * (src/engine/http/access-log.ts) are appended to their files — at once, each line in one write, as
 * nginx writes without `buffer=`; every worker thread appends to the same files.
 */
import { openSync, writeSync } from 'node:fs';
import { accessLogLines } from '../../engine/http/access-log.ts';
import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import type { RequestFacts } from '../../engine/variables/request-context.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';
import type { ExchangeOutcome } from '../http/contract/exchange-events.ts';

interface Noted {
  readonly site: Site;
  readonly route: Route;
  readonly facts: RequestFacts;
}

const noted = new WeakMap<DownstreamRequest, Noted>();

/** The request was decided under `route`: its lines are written when it ends (none: nothing kept). */
export function noteForAccessLog(
  ctx: DownstreamRequest,
  site: Site,
  route: Route,
  facts: RequestFacts,
): void {
  if (route.handler.accessLogs.length !== 0) noted.set(ctx, { site, route, facts });
}

/** The request ended as `outcome` says: its lines go to their files. */
export function writeAccessLogs(ctx: DownstreamRequest, outcome: ExchangeOutcome, nowMs: number): void {
  const request = noted.get(ctx);
  if (request === undefined) return;
  noted.delete(ctx);
  const progress = ctx.progress;
  if (progress !== undefined) {
    progress.status = outcome.status;
    progress.bodyBytesSent = outcome.bodyBytes;
    // nginx 1.22 logs after ngx_http_set_keepalive cleared r->keepalive: `close`, and no Keep-Alive
    progress.keepAlive = false;
  }
  const { site, route, facts } = request;
  for (const { path, line } of accessLogLines(route, facts, nowMs, site.variables.slots)) append(path, line);
}

/** The files written to, opened once (for appending) and kept open, as nginx keeps its logs. */
const files = new Map<string, number | null>();

function append(path: string, line: string): void {
  let fd = files.get(path);
  if (fd === undefined) {
    try {
      fd = openSync(path, 'a');
    } catch {
      // nginx would not have started; the request is not the place to fail
      fd = null;
    }
    files.set(path, fd);
  }
  if (fd !== null) writeSync(fd, Buffer.from(line, 'latin1'));
}
