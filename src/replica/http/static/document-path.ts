/**
 * ngx_http_map_uri_to_path and the extension nginx types a file by (ngx_http_set_exten,
 * ngx_http_set_content_type): pure rules, no I/O.
 */
import type { DocumentRoot, StaticFiles } from '../../../engine/http/static-files.ts';

/** The file a URI names: `root` + URI, `alias` + what follows the location's prefix, or the regex alias. */
export function documentPath(root: DocumentRoot, uri: string): string {
  if (root.alias === null) return root.path + uri;
  if (root.alias === 'whole') return root.path;
  return root.path + uri.slice(root.alias);
}

/** The URI's extension: after the last dot of its last segment that does not start it. */
export function extensionOf(uri: string): string {
  for (let i = uri.length - 1; i > 1; i--) {
    const c = uri[i];
    if (c === '.' && uri[i - 1] !== '/') return uri.slice(i + 1);
    if (c === '/') return '';
  }
  return '';
}

/** `Content-Type` by `types`, else `default_type`. */
export function contentTypeOf(files: StaticFiles, uri: string): string {
  const ext = extensionOf(uri);
  if (ext === '') return files.defaultType;
  return files.types.get(ext.toLowerCase()) ?? files.defaultType;
}
