/** A level's `error_page` lines compiled into the engine's table (engine/http/error-pages.ts). */

import { type CompiledErrorPage, type ErrorPages, NO_ERROR_PAGES } from '../engine/http/error-pages.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import { configError } from './config-error.ts';
import type { ErrorPageSpec } from './model.ts';

/** The statuses a failed upstream finalizes a request with (ngx_http_upstream_next). */
const UPSTREAM_FAILURES: ReadonlySet<number> = new Set([502, 504]);

/**
 * The first line naming a status is the one nginx finds for it. A proxying level's page for an
 * upstream failure is refused: the replica answers those with nginx's own page.
 */
export function compileErrorPages(
  specs: readonly ErrorPageSpec[] | undefined,
  recursive: boolean | undefined,
  variables: VariableTable,
  proxies: boolean,
): ErrorPages {
  if (specs === undefined || specs.length === 0) return NO_ERROR_PAGES;
  const byCode = new Map<number, CompiledErrorPage>();
  for (const spec of specs) {
    if (proxies && UPSTREAM_FAILURES.has(spec.code))
      throw configError(
        `"error_page ${spec.code}" where requests are proxied is not supported by limitswitch (nginx's own page answers an upstream failure)`,
        spec.source,
      );
  }
  for (const spec of specs)
    if (!byCode.has(spec.code))
      byCode.set(spec.code, { overwrite: spec.overwrite, uri: variables.compile(spec.uri) });
  return { byCode, recursive: recursive ?? false };
}
