/**
 * ngx_http_core_module's `error_page code … [=[response]] uri;` and `recursive_error_pages`: a level's
 * own `error_page` lines replace the enclosing level's, as nginx merges them.
 */

import { atoi } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { ErrorPageSpec } from '../model.ts';
import { complexValue, flagArg, levelOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** Statuses nginx answers with 400 through an error page unless `=` says otherwise. */
const AS_BAD_REQUEST: ReadonlySet<number> = new Set([494, 495, 496, 497]);

function errorPage(d: Directive, scope: Scope): void {
  const args = d.args;
  let codesEnd = args.length - 1;
  let overwrite = -1;
  const response = args[args.length - 2]!;
  if (response.startsWith('=')) {
    if (args.length === 2) throw configError(`invalid value "${response}"`, d);
    if (response.length > 1) {
      const code = atoi(response.slice(1));
      if (code === null) throw configError(`invalid value "${response}"`, d);
      overwrite = code;
    } else {
      overwrite = 0;
    }
    codesEnd--;
  }
  const uri = complexValue(args[args.length - 1]!, d, scope);
  const level = levelOf(scope);
  level.errorPages ??= [];
  for (const text of args.slice(0, codesEnd)) {
    const code = atoi(text);
    if (code === null || code === 499) throw configError(`invalid value "${text}"`, d);
    if (code < 300 || code > 599) throw configError(`value "${text}" must be between 300 and 599`, d);
    const spec: ErrorPageSpec = {
      code,
      overwrite: overwrite === -1 && AS_BAD_REQUEST.has(code) ? 400 : overwrite,
      uri,
      source: ref(d),
    };
    level.errorPages.push(spec);
  }
}

function recursiveErrorPages(d: Directive, scope: Scope): void {
  levelOf(scope).recursiveErrorPages = flagArg(d);
}

export const errorPageDirectives: readonly DirectiveSpec[] = [
  { name: 'error_page', contexts: ['http', 'server', 'location'], args: '2+', handle: errorPage },
  {
    name: 'recursive_error_pages',
    contexts: ['http', 'server', 'location'],
    args: [1],
    handle: recursiveErrorPages,
  },
];
