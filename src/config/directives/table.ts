/**
 * The directive table: every directive limitswitch reads, by name. A name can have several entries
 * (`server` in http is a block, in upstream a line), told apart by context as nginx does.
 */
import { addHeaderDirectives } from './add-header.ts';
import { answerFilterDirectives } from './answer-filters.ts';
import { apiRateLimitDirectives } from './api-rate-limit.ts';
import { clientDirectives } from './client.ts';
import { clientConnectionDirectives } from './client-connection.ts';
import { coreDirectives } from './core.ts';
import { errorPageDirectives } from './error-page.ts';
import { geoDirectives } from './geo.ts';
import { ignoredDirectives, ignoredFamily } from './ignored.ts';
import { keyvalDirectives } from './keyval.ts';
import { limitConnDirectives } from './limit-conn.ts';
import { limitExceptDirectives } from './limit-except.ts';
import { limitReqDirectives } from './limit-req.ts';
import { locationDirectives } from './location.ts';
import { logFormatDirectives } from './log-format.ts';
import { mapDirectives } from './map.ts';
import { priorityLevelDirectives } from './priority-level.ts';
import { proxyDirectives } from './proxy.ts';
import { proxySslDirectives } from './proxy-ssl.ts';
import { realIpAccessDirectives } from './realip-access.ts';
import { rewriteIfDirectives } from './rewrite-if.ts';
import { serverDirectives } from './server.ts';
import { sslDirectives } from './ssl.ts';
import { staticFilesDirectives } from './static-files.ts';
import type { DirectiveSpec } from './types.ts';
import { upstreamDirectives } from './upstream.ts';
import { workerProcessesDirectives } from './worker-processes.ts';

const TABLE = new Map<string, DirectiveSpec[]>();
for (const spec of [
  ...coreDirectives,
  ...workerProcessesDirectives,
  ...serverDirectives,
  ...sslDirectives,
  ...locationDirectives,
  ...rewriteIfDirectives,
  ...errorPageDirectives,
  ...limitExceptDirectives,
  ...limitReqDirectives,
  ...limitConnDirectives,
  ...apiRateLimitDirectives,
  ...priorityLevelDirectives,
  ...keyvalDirectives,
  ...mapDirectives,
  ...geoDirectives,
  ...upstreamDirectives,
  ...realIpAccessDirectives,
  ...proxyDirectives,
  ...proxySslDirectives,
  ...addHeaderDirectives,
  ...answerFilterDirectives,
  ...clientDirectives,
  ...clientConnectionDirectives,
  ...staticFilesDirectives,
  ...logFormatDirectives,
  ...ignoredDirectives,
]) {
  const entries = TABLE.get(spec.name) ?? [];
  entries.push(spec);
  TABLE.set(spec.name, entries);
}

/** The entries for a directive name, or `undefined` when limitswitch does not know it. */
export function lookupDirective(name: string): readonly DirectiveSpec[] | undefined {
  const entries = TABLE.get(name);
  if (entries) return entries;
  const family = ignoredFamily(name);
  return family && [family];
}

/** Every name in the table (ignored families excluded), for documentation and tests. */
export function knownDirectiveNames(): string[] {
  return [...TABLE.keys()];
}
