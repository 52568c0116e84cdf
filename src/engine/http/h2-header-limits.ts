/**
 * nginx 1.22's limits on an HTTP/2 request's header list, from `large_client_header_buffers` (the
 * `http2_max_field_size` and `http2_max_header_size` it replaced are obsolete): a name or value whose
 * encoded length is over one buffer's size (ngx_http_v2_state_field_len), or a list whose names and
 * values, decoded, come to more than all the buffers (ngx_http_v2_state_process_header). Either way
 * nginx sends GOAWAY ENHANCE_YOUR_CALM and closes the connection.
 *
 * The fields arrive decoded (node:http2 reads the HPACK block), so a field's encoded length is taken
 * to be the shorter of its raw and its Huffman-coded length — what HPACK encoders send (nghttp2 and
 * so curl, Go, browsers). A client that sends a field raw though Huffman coding is shorter has it
 * measured by the shorter length.
 */

import type { HeaderBuffers } from './header-buffers.ts';

/** The bits of each byte's HPACK Huffman code (RFC 7541 Appendix B), as char codes 64 + bits. */
const HUFFMAN_BITS =
  'MW\\\\\\\\\\\\\\X^\\\\^\\\\\\\\\\\\\\\\^\\\\\\\\\\\\\\\\\\FJJLMFHKJJHKHFFFEEEFFFFFFFGHOFLJMFGGGGGGGGGGGGGGGGGGGGGGHGHMSMNFOEFEFEFFFEGGFFFEFGFEEFGGGGGOKNM\\TVTTVVVWVWWWWWXWXXVWXWWWWUVWVWWXVUTVVWWUWVVXUVWWUUVUWVWWTVVVWVVWZZTSVWVYZZZ[[ZXYSUZ[[Z[XUUZZ\\[[[TXTUVUUWVVYYXXZWZ[ZZ[[[[[\\[[[[[Z';

/** The bytes of `text` (one byte a char, as node:http2 decodes fields) Huffman-coded, padding included. */
export function huffmanLength(text: string): number {
  let bits = 0;
  for (let i = 0; i < text.length; i++) bits += HUFFMAN_BITS.charCodeAt(text.charCodeAt(i) & 0xff) - 64;
  return Math.ceil(bits / 8);
}

/** A field's length on the wire: the shorter of raw and Huffman-coded. */
function encodedLength(text: string): number {
  return Math.min(text.length, huffmanLength(text));
}

/** What nginx logs before it closes the connection. */
export type H2HeaderFault = 'client sent too large header field' | 'client sent too large header';

/**
 * The fault nginx finds in a header block of `rawHeaders` (names and values, pseudo-headers and each
 * cookie crumb as fields of their own), read in `buffers`; null when it takes them.
 */
export function h2HeaderFault(rawHeaders: readonly string[], buffers: HeaderBuffers): H2HeaderFault | null {
  const fieldBytes = buffers.largeBytes;
  let listBytes = buffers.largeBytes * buffers.largeCount;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const value = rawHeaders[i + 1]!;
    // the common field is far from the limit: its Huffman length is not needed
    if (
      (name.length > fieldBytes && encodedLength(name) > fieldBytes) ||
      (value.length > fieldBytes && encodedLength(value) > fieldBytes)
    )
      return 'client sent too large header field';
    listBytes -= name.length + value.length;
    if (listBytes < 0) return 'client sent too large header';
  }
  return null;
}
