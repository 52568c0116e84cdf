/**
 * The content phase of a location that answers from disk, as nginx's index and static modules do
 * it: blocking `open()` and `fstat()`, as nginx makes them without `aio` (so the answer is known
 * when the hook returns); the rules of the answer are pure (file-answer.ts).
 *
 * - A URI ending in `/`: the first `index` that exists is an internal redirect to it; none → 403
 *   (`directory index of "…" is forbidden`); a missing directory → 404.
 * - Else the file: missing → 404, unreadable → 403, a directory → 301 to the slash form, a method
 *   other than GET and HEAD → 405 (POST is refused only once the file is found, as nginx does).
 */
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import { errnoSuffix } from '../../../config/config-error.ts';
import type { StaticFiles } from '../../../engine/http/static-files.ts';
import { escapeUri } from '../../../engine/http/uri.ts';
import type { LogLine } from '../../../engine/log-line.ts';
import { documentPath } from './document-path.ts';

/** What the content phase answers. */
export type StaticOutcome =
  | { readonly kind: 'page'; readonly code: number; readonly log: LogLine | null }
  /** 301 to the directory's slash form: the URI (escaped) and `?args`, as the Location's path. */
  | { readonly kind: 'directory'; readonly location: string }
  /** An index found (or an absolute one): the request goes on as this URI. */
  | { readonly kind: 'internal'; readonly uri: string }
  | { readonly kind: 'file'; readonly fd: number; readonly size: number; readonly mtimeS: number };

/** The part of the request the content phase reads. */
export interface StaticRequest {
  readonly method: string;
  /** `$uri`: decoded, normalised, its bytes as latin1 characters. */
  readonly uri: string;
  readonly args: string;
  readonly hasArgs: boolean;
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** A path to hand the system: the configured (UTF-8) prefix, then the URI's bytes. */
function systemPath(files: StaticFiles, uri: string): { bytes: Buffer; text: string } {
  const root = files.documentRoot;
  const text = documentPath(root, uri);
  const prefix = root.alias === 'whole' ? text : root.path;
  const rest = root.alias === 'whole' ? '' : text.slice(root.path.length);
  return { bytes: Buffer.concat([Buffer.from(prefix, 'utf8'), Buffer.from(rest, 'latin1')]), text };
}

const code = (error: unknown): string => (error as { code?: string }).code ?? '';
const page = (status: number, log: LogLine | null = null): StaticOutcome => ({
  kind: 'page',
  code: status,
  log,
});

export function staticContent(files: StaticFiles, req: StaticRequest): StaticOutcome {
  const method = req.method;
  const readable = method === 'GET' || method === 'HEAD' || method === 'POST';
  if (req.uri.endsWith('/')) {
    if (readable) {
      const found = indexOf(files, req.uri);
      if (found !== null) return found;
    }
    // the static module refuses the method before it declines a directory
    if (!readable) return page(405);
    const dir = systemPath(files, req.uri).text;
    return page(403, { level: 'error', message: `directory index of "${dir}" is forbidden` });
  }
  if (!readable) return page(405);
  return openFile(files, req);
}

/** ngx_http_index_handler: the first index that exists, or a refusal; null: none exists. */
function indexOf(files: StaticFiles, uri: string): StaticOutcome | null {
  let dirTested = false;
  for (const name of files.index) {
    if (name.startsWith('/')) return { kind: 'internal', uri: name };
    const path = systemPath(files, uri + name);
    try {
      statSync(path.bytes);
      return { kind: 'internal', uri: uri + name };
    } catch (error) {
      const errno = code(error);
      if (errno === 'ENOTDIR' || errno === 'ENAMETOOLONG' || errno === 'EACCES')
        return indexError(path.text, error);
      if (!dirTested) {
        const refused = testDirectory(files, uri);
        if (refused !== null) return refused;
        dirTested = true;
      }
      if (errno === 'ENOENT') continue;
      return page(500, { level: 'crit', message: `stat() "${path.text}" failed ${errnoSuffix(error)}` });
    }
  }
  return null;
}

function indexError(path: string, error: unknown): StaticOutcome {
  if (code(error) === 'EACCES')
    return page(403, { level: 'error', message: `"${path}" is forbidden ${errnoSuffix(error)}` });
  return page(404, { level: 'error', message: `"${path}" is not found ${errnoSuffix(error)}` });
}

/** ngx_http_index_test_dir: the directory itself (its path without the trailing slash). */
function testDirectory(files: StaticFiles, uri: string): StaticOutcome | null {
  const full = systemPath(files, uri);
  const strip = full.text.endsWith('/') && full.text.length > 1;
  const bytes = strip ? full.bytes.subarray(0, full.bytes.length - 1) : full.bytes;
  const text = strip ? full.text.slice(0, -1) : full.text;
  try {
    if (statSync(bytes).isDirectory()) return null;
    return page(500, { level: 'alert', message: `"${text}" is not a directory` });
  } catch (error) {
    const errno = code(error);
    if (errno === 'ENOENT') return indexError(text, error);
    if (errno === 'EACCES') return null;
    return page(500, { level: 'crit', message: `stat() "${text}" failed ${errnoSuffix(error)}` });
  }
}

/** ngx_http_static_handler from `open()` on. */
function openFile(files: StaticFiles, req: StaticRequest): StaticOutcome {
  const path = systemPath(files, req.uri);
  let fd: number;
  try {
    fd = openSync(path.bytes, OPEN_FLAGS);
  } catch (error) {
    const errno = code(error);
    const message = `open() "${path.text}" failed ${errnoSuffix(error)}`;
    if (errno === 'ENOENT' || errno === 'ENOTDIR' || errno === 'ENAMETOOLONG')
      return page(404, { level: 'error', message });
    if (errno === 'EACCES') return page(403, { level: 'error', message });
    return page(500, { level: 'crit', message });
  }
  let keep = false;
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { kind: 'directory', location: directoryLocation(req) };
    if (!stat.isFile()) return page(404, { level: 'crit', message: `"${path.text}" is not a regular file` });
    if (req.method === 'POST') return page(405);
    keep = true;
    return { kind: 'file', fd, size: stat.size, mtimeS: Math.floor(stat.mtimeMs / 1000) };
  } finally {
    if (!keep) closeSync(fd);
  }
}

/** The slash form of a directory's URI, with the request's arguments. */
function directoryLocation(req: StaticRequest): string {
  const path = `${escapeUri(req.uri)}/`;
  return req.args.length === 0 ? path : `${path}?${req.args}`;
}
