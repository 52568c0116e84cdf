/**
 * How a location answers from disk when nothing else answers it (nginx's static and index modules):
 * its `root` or `alias`, `index` files, `types` and `default_type`, as merged for the location.
 */

import type { VariableGetter } from '../variables/variable-table.ts';

/** `root path` (`alias: null`) or `alias path`: where a URI's file is looked for. */
export interface DocumentRoot {
  /** A full path; a `root` without its trailing slash. */
  readonly path: string;
  /**
   * null for `root` (the path is followed by the whole URI); for `alias`, the length of the
   * location's prefix it replaces, or `'whole'` in a regex location (the path is the file itself).
   */
  readonly alias: number | 'whole' | null;
}

export interface StaticFiles {
  readonly documentRoot: DocumentRoot;
  /** `index` names, in order (default `index.html`). */
  readonly index: readonly string[];
  /** The names with variables, compiled (the same order; null: a name without); absent: none has. */
  readonly indexValues?: readonly (VariableGetter | null)[];
  /** `types`: lower-cased extension → MIME type. */
  readonly types: ReadonlyMap<string, string>;
  /** `default_type` (default `text/plain`). */
  readonly defaultType: string;
}

/** nginx's types when no level has a `types` block (ngx_http_core_default_types). */
export const NGINX_DEFAULT_TYPES: ReadonlyMap<string, string> = new Map([
  ['html', 'text/html'],
  ['gif', 'image/gif'],
  ['jpg', 'image/jpeg'],
]);

export const DEFAULT_INDEX: readonly string[] = Object.freeze(['index.html']);
