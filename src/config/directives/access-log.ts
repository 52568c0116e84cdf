/**
 * ngx_http_log_module's `access_log` (ngx_http_log_set_log): `off`, or a file with a `log_format`
 * (nginx's `combined` when it names none) and `buffer=`, `flush=`, `if=`. A level's own lines replace
 * the enclosing level's; a format's variables must be known once a line uses it. Lines go to the file as each request ends, so `buffer=` and `flush=` change
 * nothing a reader of the file sees once the server stopped. What the replica cannot write as nginx
 * does is refused: `gzip`, `syslog:`, a path with variables.
 */

import { parseSize, parseTimeMs } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { findLogFormat } from '../log-format.ts';
import type { AccessLogSpec } from '../model.ts';
import { complexValue, httpOf, levelOf, ref } from './helpers.ts';
import type { Scope } from './types.ts';

function notSupported(what: string, d: Directive): never {
  throw configError(`${what} of "access_log" is not supported by limitswitch`, d);
}

export function accessLog(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  const [path, formatName, ...params] = d.args as [string, ...string[]];
  if (path === 'off') {
    if (d.args.length > 1) throw configError(`invalid parameter "${d.args[1]}"`, d);
    level.accessLogs = [];
    return;
  }
  if (path.startsWith('syslog:')) notSupported('syslog', d);
  if (path.includes('$')) notSupported('a path with variables', d);
  const name = formatName ?? 'combined';
  const format = findLogFormat(httpOf(scope).logFormats, name);
  if (format === undefined) throw configError(`unknown log format "${name}"`, d);
  // its variables are checked once it is used, each at the log_format line (nginx checks them all there)
  const http = httpOf(scope);
  for (const part of format.parts)
    if ('variable' in part) http.variableUses.push({ name: part.variable, source: format.source });
  let buffered = false;
  let flushes = false;
  let condition: AccessLogSpec['condition'] = null;
  for (const param of params) {
    if (param.startsWith('buffer=')) {
      if (parseSize(param.slice(7)) === null) throw configError(`invalid buffer size "${param.slice(7)}"`, d);
      buffered = true;
    } else if (param.startsWith('flush=')) {
      if (parseTimeMs(param.slice(6)) === null)
        throw configError(`invalid flush time "${param.slice(6)}"`, d);
      flushes = true;
    } else if (param === 'gzip' || param.startsWith('gzip=')) notSupported('the "gzip" parameter', d);
    else if (param.startsWith('if=')) condition = complexValue(param.slice(3), d, scope);
    else throw configError(`invalid parameter "${param}"`, d);
  }
  if (flushes && !buffered) throw configError(`no buffer is defined for access_log "${path}"`, d);
  level.accessLogs ??= [];
  level.accessLogs.push({ path: scope.session.fullPath(path), format, condition, source: ref(d) });
}
