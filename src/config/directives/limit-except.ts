/**
 * ngx_http_core_module's `limit_except method … { … }`: a request whose method is not listed is put
 * under the block's own configuration (`GET` lists `HEAD` too). The replica reads `allow`, `deny` and
 * `proxy_pass` there; anything else inside is refused with its line. And `internal`, the other
 * location-level limit of who may reach a location.
 */
import { newLocation } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, ref } from './helpers.ts';
import { proxyDirectives } from './proxy.ts';
import { realIpAccessDirectives } from './realip-access.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** ngx_http_core_limit_except's methods. */
const METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'MKCOL',
  'COPY',
  'MOVE',
  'OPTIONS',
  'PROPFIND',
  'PROPPATCH',
  'LOCK',
  'UNLOCK',
  'PATCH',
]);

function limitExcept(d: Directive, scope: Scope): void {
  const location = scope.location!;
  if (location.limitExcept !== null) throw duplicate(d);
  const methods = new Set<string>();
  for (const method of d.args) {
    if (!METHODS.has(method)) throw configError(`invalid method "${method}"`, d);
    methods.add(method);
  }
  if (methods.has('GET')) methods.add('HEAD');
  // the block's level: its allow and deny, read by the access module's own handler
  // (a named one: proxy_pass refuses a URI part there, as nginx does inside limit_except)
  const level = newLocation(ref(d), 'prefix', location.pattern, null, true);
  const inner: Scope = { ...scope, location: level };
  for (const child of d.block ?? []) {
    if (child.name === 'proxy_pass') {
      blockProxyPass(child, inner);
      continue;
    }
    const spec = realIpAccessDirectives.find((s) => s.name === child.name);
    if (spec === undefined || (child.name !== 'allow' && child.name !== 'deny'))
      throw configError(
        `"${child.name}" directive is not supported inside "limit_except" by limitswitch`,
        child,
      );
    if (child.block !== null || child.args.length !== 1)
      throw configError(`invalid number of arguments in "${child.name}" directive`, child);
    spec.handle(child, inner);
  }
  location.limitExcept = { methods: [...methods], access: level.access, proxyPass: level.proxyPass };
}

/** `proxy_pass` in a block (`limit_except`, `if`), read by the proxy module's own handler. */
export function blockProxyPass(d: Directive, inner: Scope): void {
  const spec = proxyDirectives.find((s) => s.name === 'proxy_pass')!;
  if (d.block !== null || d.args.length !== 1)
    throw configError(`invalid number of arguments in "${d.name}" directive`, d);
  spec.handle(d, inner);
}

/** `internal` (ngx_http_core_internal). */
function internal(d: Directive, scope: Scope): void {
  const location = scope.location!;
  if (location.internal) throw duplicate(d);
  location.internal = true;
}

export const limitExceptDirectives: readonly DirectiveSpec[] = [
  { name: 'limit_except', contexts: ['location'], block: true, args: '1+', handle: limitExcept },
  { name: 'internal', contexts: ['location'], args: [0], handle: internal },
];
