/**
 * ngx_http_log_module's `log_format`: read into the model with nginx's checks and messages, for
 * `access_log` (access-log.ts) and `limitswitch replay`, which parses access logs written in it.
 */

import { hasCode } from '../../shared/errors.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { compileLogFormat } from '../log-format.ts';
import { accessLog } from './access-log.ts';
import { httpOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** `log_format name [escape=default|json|none] string …;` (ngx_http_log_set_format). */
function logFormat(d: Directive, scope: Scope): void {
  const http = httpOf(scope);
  const name = d.args[0]!;
  // `combined` is predefined: nginx holds it as the first format of the list
  if (name === 'combined' || http.logFormats.some((format) => format.name === name)) {
    throw configError(`duplicate "log_format" name "${name}"`, d);
  }
  let compiled: ReturnType<typeof compileLogFormat>;
  try {
    compiled = compileLogFormat(d.args.slice(1));
  } catch (err) {
    if (!hasCode(err, 'RL_ERR_VALUE_SYNTAX')) throw err;
    throw configError(err.message, d);
  }
  http.logFormats.push({ name, ...compiled, source: ref(d) });
}

export const logFormatDirectives: readonly DirectiveSpec[] = [
  { name: 'log_format', contexts: ['http'], args: '2+', handle: logFormat },
  { name: 'access_log', contexts: ['http', 'server', 'location'], args: '1+', handle: accessLog },
];
