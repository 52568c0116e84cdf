/**
 * ngx_http_realip_module (set_real_ip_from, real_ip_header, real_ip_recursive) and
 * ngx_http_access_module (allow, deny). Addresses must be IP addresses or CIDR blocks (host names are
 * not resolved); allow/deny also take `unix:`, set_real_ip_from does not (yet).
 */
import { parseCidr } from '../../engine/net/address-text.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, flagArg, levelOf, ref } from './helpers.ts';
import { levelSlot } from './level-slot.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const LEVELS = ['http', 'server', 'location'] as const;

function notSupportedUnix(d: Directive): never {
  throw configError(`the "unix:" address of "${d.name}" is not supported by limitswitch`, d);
}

function setRealIpFrom(d: Directive, scope: Scope): void {
  const from = d.args[0]!;
  if (from.startsWith('unix:')) notSupportedUnix(d);
  const cidr = parseCidr(from);
  if (!cidr) throw configError(`host not found in set_real_ip_from "${from}"`, d);
  if (cidr.lowBits) scope.session.warn(`low address bits of ${from} are meaningless`, ref(d));
  const level = levelOf(scope);
  level.realIpFrom ??= [];
  level.realIpFrom.push(from);
}

function realIpHeader(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.realIpHeader !== null) throw duplicate(d);
  const header = d.args[0]!;
  if (header === 'proxy_protocol')
    throw configError(`the "proxy_protocol" value of "real_ip_header" is not supported by limitswitch`, d);
  level.realIpHeader = header;
}

const realIpRecursive = levelSlot('realIpRecursive', flagArg);

/**
 * `allow address | CIDR | unix: | all;` and `deny …;` — kept in order, the first match decides. Only a
 * bare `unix:` names UNIX-domain clients; `unix:/path` is an invalid parameter, as to nginx.
 */
function access(d: Directive, scope: Scope): void {
  const from = d.args[0]!;
  if (from !== 'all' && from !== 'unix:') {
    const cidr = parseCidr(from);
    if (!cidr) throw configError(`invalid parameter "${from}"`, d);
    if (cidr.lowBits) scope.session.warn(`low address bits of ${from} are meaningless`, ref(d));
  }
  const level = levelOf(scope);
  level.access ??= [];
  level.access.push({ action: d.name === 'allow' ? 'allow' : 'deny', from });
}

export const realIpAccessDirectives: readonly DirectiveSpec[] = [
  { name: 'set_real_ip_from', contexts: LEVELS, args: [1], handle: setRealIpFrom },
  { name: 'real_ip_header', contexts: LEVELS, args: [1], handle: realIpHeader },
  { name: 'real_ip_recursive', contexts: LEVELS, args: [1], handle: realIpRecursive },
  { name: 'allow', contexts: LEVELS, args: [1], handle: access },
  { name: 'deny', contexts: LEVELS, args: [1], handle: access },
];
