/**
 * The `proxy_set_header` lines in force, compiled against the site's variables into the set the
 * data path writes upstream (src/engine/http/proxy-headers.ts). A location with none shares nginx's
 * default set.
 */
import {
  compileProxyHeaders,
  DEFAULT_PROXY_HEADERS,
  type ProxyHeaders,
} from '../engine/http/proxy-headers.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import type { ProxySetHeader } from './model.ts';

export function compileProxySetHeaders(
  lines: readonly ProxySetHeader[],
  variables: VariableTable,
): ProxyHeaders {
  if (lines.length === 0) return DEFAULT_PROXY_HEADERS;
  return compileProxyHeaders(
    lines.map((line) => ({
      name: line.field,
      value: line.complex === null ? null : variables.compile(line.complex),
    })),
  );
}
