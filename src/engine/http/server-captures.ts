/**
 * What a `server_name ~regex` that selected the request's server leaves it (ngx_http_regex_exec in
 * ngx_http_find_virtual_server): its groups are `$1`… until another regex matches, its named
 * captures are variables set for the rest of the request.
 */
import type { RequestContext } from '../variables/request-context.ts';
import type { Route } from './route.ts';

export function setServerCaptures(route: Route, ctx: RequestContext): void {
  const regex = route.serverRegex;
  if (regex === undefined || regex === null) return;
  const subject = route.host;
  const slots = route.server.serverNameSlots?.get(regex);
  if (slots === undefined || slots.size === 0) {
    ctx.lastMatch = { regex, subject };
    return;
  }
  const captures = regex.exec(subject);
  ctx.lastMatch = captures === null ? null : { regex, subject, captures };
  if (captures !== null) for (const [name, slot] of slots) ctx.cache[slot] = captures.groups?.[name] ?? '';
}
