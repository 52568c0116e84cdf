/**
 * The head and body of a file answer, as nginx's filters make them after the static module's 200:
 * the not_modified filter (304, 412), then the range filter (206 single or multipart, 416), with
 * `Last-Modified`, `ETag` (`"hex(mtime)-hex(size)"`) and `Accept-Ranges: bytes` on a whole answer.
 * Pure: the body is described (pieces of text and ranges of the file), the writer reads the file.
 */
import type { BodyPiece } from '../contract/decision.ts';
import { type ByteRange, byteRanges } from './byte-ranges.ts';
import { type HeaderOf, preconditions, type Validators } from './preconditions.ts';

export interface FileAnswer {
  readonly status: number;
  /** Fields after `Server`, as name, value, …; a 412 or 416 is nginx's page for it plus these. */
  readonly headers: string[];
  /** null: nginx's page for `status` (412, 416); else the pieces of the body (none for 304). */
  readonly body: readonly BodyPiece[] | null;
}

export interface FileFacts {
  readonly size: number;
  readonly mtimeS: number;
  readonly contentType: string;
}

export function etagOf(mtimeS: number, size: number): string {
  return `"${mtimeS.toString(16)}-${size.toString(16)}"`;
}

export function lastModifiedOf(mtimeS: number): string {
  return new Date(mtimeS * 1000).toUTCString();
}

/** nginx's multipart boundary: a process-wide counter, printed in 20 digits. */
let boundaryNumber = 0;

export function fileAnswer(header: HeaderOf, file: FileFacts): FileAnswer {
  const v: Validators = { mtimeS: file.mtimeS, etag: etagOf(file.mtimeS, file.size) };
  const lastModified = lastModifiedOf(file.mtimeS);
  const outcome = preconditions(header, v);
  if (outcome === 412) return { status: 412, headers: [], body: null };
  if (outcome === 304)
    return { status: 304, headers: ['Last-Modified', lastModified, 'ETag', v.etag], body: [] };
  const ranges = byteRanges(header, v, file.size);
  if (ranges.kind === 'unsatisfiable')
    return { status: 416, headers: ['Content-Range', `bytes */${file.size}`], body: null };
  if (ranges.kind === 'whole') {
    return {
      status: 200,
      headers: [
        'Content-Type',
        file.contentType,
        'Content-Length',
        `${file.size}`,
        'Last-Modified',
        lastModified,
        'ETag',
        v.etag,
        'Accept-Ranges',
        'bytes',
      ],
      body: file.size === 0 ? [] : [{ start: 0, end: file.size }],
    };
  }
  const parts = ranges.ranges;
  if (parts.length === 1) {
    const only = parts[0]!;
    return {
      status: 206,
      headers: [
        'Content-Type',
        file.contentType,
        'Content-Length',
        `${only.end - only.start}`,
        'Last-Modified',
        lastModified,
        'ETag',
        v.etag,
        'Content-Range',
        `bytes ${only.start}-${only.end - 1}/${file.size}`,
      ],
      body: [only],
    };
  }
  return multipart(parts, file, lastModified, v.etag);
}

/** ngx_http_range_multipart_header and its body: each range behind its own part head. */
function multipart(
  parts: readonly ByteRange[],
  file: FileFacts,
  lastModified: string,
  etag: string,
): FileAnswer {
  const boundary = `${++boundaryNumber}`.padStart(20, '0');
  const body: BodyPiece[] = [];
  let length = 0;
  for (const range of parts) {
    const head = `\r\n--${boundary}\r\nContent-Type: ${file.contentType}\r\nContent-Range: bytes ${range.start}-${range.end - 1}/${file.size}\r\n\r\n`;
    body.push(head, range);
    length += Buffer.byteLength(head) + range.end - range.start;
  }
  const tail = `\r\n--${boundary}--\r\n`;
  body.push(tail);
  length += tail.length;
  return {
    status: 206,
    headers: [
      'Content-Type',
      `multipart/byteranges; boundary=${boundary}`,
      'Content-Length',
      `${length}`,
      'Last-Modified',
      lastModified,
      'ETag',
      etag,
    ],
    body,
  };
}
