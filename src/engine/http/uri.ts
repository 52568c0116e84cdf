/**
 * nginx's request-target processing: `$request_uri` as received, `$args` after `?`, and `$uri`
 * percent-decoded with `.`/`..` resolved and slashes merged (ngx_http_parse_complex_uri with
 * merge_slashes on). Strings are byte strings (one char per byte), like nginx's buffers.
 */

export interface ParsedTarget {
  /** Normalised, decoded path (`$uri`). */
  readonly uri: string;
  /** Query string without `?` (`$args`), as received. */
  readonly args: string;
  /** True when the target had a `?`. */
  readonly hasArgs: boolean;
}

/**
 * Parses a request target; null when nginx would answer 400 (bad escape, `..` above the root, no `/`).
 * A `#` ends the path, and the args when it follows `?` (ngx_http_parse_complex_uri: `#` makes the
 * URI complex, and the complex parse stops there); `$request_uri` keeps it.
 */
export function parseRequestTarget(target: string): ParsedTarget | null {
  const hash = target.indexOf('#');
  const end = hash === -1 ? target.length : hash;
  const question = target.indexOf('?');
  const q = question !== -1 && question < end ? question : -1;
  const rawPath = target.slice(0, q === -1 ? end : q);
  const args = q === -1 ? '' : target.slice(q + 1, end);
  let path = rawPath;
  if (!path.startsWith('/')) {
    // absolute-form: http://host/path
    const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(path);
    if (scheme === null) return null;
    path = path.slice(scheme[0].length) || '/';
  }
  const decoded = percentDecode(path);
  if (decoded === null) return null;
  const uri = normalizePath(decoded);
  if (uri === null) return null;
  return { uri, args, hasArgs: q !== -1 };
}

/** Decodes `%XX` into bytes; null on a malformed escape or a decoded NUL (nginx rejects both). */
export function percentDecode(text: string): string | null {
  if (!text.includes('%')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch !== '%') {
      out += ch;
      continue;
    }
    const hex = text.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
    const byte = Number.parseInt(hex, 16);
    if (byte === 0) return null;
    out += String.fromCharCode(byte);
    i += 2;
  }
  return out;
}

/** Merges `//`, drops `/./`, resolves `/../`; null when `..` climbs above the root. */
export function normalizePath(path: string): string | null {
  if (!path.includes('//') && !path.includes('/.')) return path;
  const segments: string[] = [];
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    const isLast = i === parts.length - 1;
    if (part === '' && !isLast) continue;
    if (part === '.') {
      if (isLast) segments.push('');
      continue;
    }
    if (part === '..') {
      if (segments.length === 0) return null;
      segments.pop();
      if (isLast) segments.push('');
      continue;
    }
    segments.push(part);
  }
  return `/${segments.join('/')}`;
}

/** ngx_escape_uri(NGX_ESCAPE_URI): space, `#`, `%`, `?`, controls and bytes past ASCII. */
export function escapeUri(uri: string): string {
  let out = '';
  for (let i = 0; i < uri.length; i++) {
    const c = uri.charCodeAt(i);
    if (c <= 0x20 || c === 0x23 || c === 0x25 || c === 0x3f || c >= 0x7f)
      out += `%${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += uri[i];
  }
  return out;
}
