/**
 * ngx_http_core_merge_loc_conf's rules for static files: `root`/`alias` together (an enclosing
 * location's `alias` is inherited with the prefix length it replaces), `types` as a whole block,
 * `index` and `default_type` each from the innermost level that sets them.
 */
import { parseComplexValue } from '../engine/complex-value.ts';
import type { StaticFiles } from '../engine/http/static-files.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import type { StaticFilesBuilder } from './builders.ts';

export function inheritFiles(level: StaticFilesBuilder, parent: StaticFiles): StaticFiles {
  if (
    level.documentRoot === undefined &&
    level.index === undefined &&
    level.types === undefined &&
    level.defaultType === undefined
  )
    return parent;
  return {
    documentRoot: level.documentRoot ?? parent.documentRoot,
    index: level.index ?? parent.index,
    types: level.types ?? parent.types,
    defaultType: level.defaultType ?? parent.defaultType,
  };
}

/** ngx_http_index_set_index: a name with variables is compiled, to be evaluated per request. */
export function compileIndex(files: StaticFiles, variables: VariableTable): StaticFiles {
  if (!files.index.some((name) => name.includes('$'))) return files;
  const indexValues = files.index.map((name) =>
    name.includes('$') ? variables.compile(parseComplexValue(name)) : null,
  );
  return { ...files, indexValues };
}
