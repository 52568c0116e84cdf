/**
 * The server name a TLS ClientHello asks for (RFC 6066 `server_name`), read before the handshake so
 * the connection can go to the server SNI selects with that server's whole context — certificates of
 * each key type, client CA and whether to ask for a client certificate — as nginx switches
 * SSL_CTX in its servername callback. Only the first record is read (a ClientHello larger than one
 * record, 16 KiB, is not one a client sends).
 */

/** Not a whole first record yet: wait for more bytes. */
export const INCOMPLETE = Symbol('incomplete');

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
const HOST_NAME = 0x00;

/** The SNI host name, null without one (or for a hello this reader cannot follow), or INCOMPLETE. */
export function clientHelloServerName(bytes: Buffer): string | null | typeof INCOMPLETE {
  if (bytes.length < 5) return INCOMPLETE;
  if (bytes[0] !== HANDSHAKE) return null;
  const recordEnd = 5 + bytes.readUInt16BE(3);
  if (bytes.length < recordEnd) return INCOMPLETE;
  let at = 5;
  if (bytes[at] !== CLIENT_HELLO) return null;
  const helloEnd = Math.min(recordEnd, at + 4 + bytes.readUIntBE(at + 1, 3));
  // version (2) and random (32)
  at += 4 + 2 + 32;
  const skip = (lengthBytes: 1 | 2): boolean => {
    if (at + lengthBytes > helloEnd) return false;
    at += lengthBytes + bytes.readUIntBE(at, lengthBytes);
    return at <= helloEnd;
  };
  // session id, cipher suites, compression methods
  if (!skip(1) || !skip(2) || !skip(1) || at + 2 > helloEnd) return null;
  const extensionsEnd = Math.min(helloEnd, at + 2 + bytes.readUInt16BE(at));
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = bytes.readUInt16BE(at);
    const length = bytes.readUInt16BE(at + 2);
    at += 4;
    if (type === SERVER_NAME) return hostName(bytes, at, Math.min(extensionsEnd, at + length));
    at += length;
  }
  return null;
}

function hostName(bytes: Buffer, start: number, end: number): string | null {
  let at = start + 2;
  while (at + 3 <= end) {
    const kind = bytes[at]!;
    const length = bytes.readUInt16BE(at + 1);
    at += 3;
    if (at + length > end) return null;
    if (kind === HOST_NAME) return bytes.toString('latin1', at, at + length);
    at += length;
  }
  return null;
}
