/** The request header lines nginx keeps one of, and the one transfer coding it reads a body in. */
/** `uniqueLine`'s bit for `Transfer-Encoding`. */
export const TRANSFER_ENCODING = 1;
/**
 * The header lines nginx 1.22 keeps one of (ngx_http_process_unique_header_line), each a bit; 0 for
 * any other (a second `Content-Length` is node:http's to refuse first, but not in a head too large).
 */
export function uniqueLine(name: string): number {
  // the first letter rules out most names without lower-casing them (Accept, Cookie, Cache-Control, …)
  const first = name.charCodeAt(0) | 0x20;
  switch (name.length) {
    case 6:
      return first === 0x65 /* e */ && name.toLowerCase() === 'expect' ? 2 : 0;
    case 8: {
      if (first !== 0x69 /* i */) return 0;
      const lower = name.toLowerCase();
      return lower === 'if-match' ? 4 : lower === 'if-range' ? 8 : 0;
    }
    case 13: {
      if (first !== 0x61 /* a */ && first !== 0x69 /* i */ && first !== 0x63 /* c */) return 0;
      const lower = name.toLowerCase();
      if (lower === 'authorization') return 16;
      return lower === 'if-none-match' ? 32 : lower === 'content-range' ? 64 : 0;
    }
    case 14:
      return first === 0x63 /* c */ && name.toLowerCase() === 'content-length' ? 512 : 0;
    case 17: {
      if (first !== 0x74 /* t */ && first !== 0x69 /* i */) return 0;
      const lower = name.toLowerCase();
      return lower === 'transfer-encoding' ? TRANSFER_ENCODING : lower === 'if-modified-since' ? 128 : 0;
    }
    case 19:
      return first === 0x69 /* i */ && name.toLowerCase() === 'if-unmodified-since' ? 256 : 0;
  }
  return 0;
}

/** The one coding nginx reads a body in. */
export function isChunked(codings: string): boolean {
  return codings.length === 7 && codings.toLowerCase() === 'chunked';
}

/** `Host` in any case. */
