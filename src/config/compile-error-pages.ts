/** A level's `error_page` lines compiled into the engine's table (engine/http/error-pages.ts). */

import { type CompiledErrorPage, type ErrorPages, NO_ERROR_PAGES } from '../engine/http/error-pages.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import type { ErrorPageSpec } from './model.ts';

/** The first line naming a status is the one nginx finds for it. */
export function compileErrorPages(
  specs: readonly ErrorPageSpec[] | undefined,
  recursive: boolean | undefined,
  variables: VariableTable,
): ErrorPages {
  if (specs === undefined || specs.length === 0) return NO_ERROR_PAGES;
  const byCode = new Map<number, CompiledErrorPage>();
  for (const spec of specs)
    if (!byCode.has(spec.code))
      byCode.set(spec.code, { overwrite: spec.overwrite, uri: variables.compile(spec.uri) });
  return { byCode, recursive: recursive ?? false };
}
