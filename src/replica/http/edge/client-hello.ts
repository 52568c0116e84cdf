/**
 * The server name a TLS ClientHello asks for (RFC 6066 `server_name`), read before the handshake so
 * the connection can go to the server SNI selects with that server's whole context — certificates of
 * each key type, client CA and whether to ask for a client certificate — as nginx switches
 * SSL_CTX in its servername callback.
 *
 * The hello is read as OpenSSL reads it: a handshake message may be split over several records
 * (RFC 8446 §5.1), so the records' fragments are joined until the message is whole. Every length is
 * the sender's and is checked against what was read before it is followed; bytes this reader cannot
 * follow give null, and the TLS server then fails the handshake as nginx's OpenSSL would.
 */

/** Not a whole ClientHello yet: wait for more bytes. */
export const INCOMPLETE = Symbol('incomplete');

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
const HOST_NAME = 0x00;
const RECORD_HEADER_BYTES = 5;
/** RFC 8446 §5.1: a plaintext record carries at most 2^14 bytes. */
const RECORD_MAX_BYTES = 16_384;
/** OpenSSL's CLIENT_HELLO_MAX_LENGTH: a longer hello fails its handshake anyway. */
export const CLIENT_HELLO_MAX_BYTES = 131_396;

/** The SNI host name, null without one (or for a hello this reader cannot follow), or INCOMPLETE. */
export function clientHelloServerName(bytes: Buffer): string | null | typeof INCOMPLETE {
  const hello = handshakeMessage(bytes);
  if (hello === null || hello === INCOMPLETE) return hello;
  return serverName(hello);
}

/** The first handshake message joined from the records' fragments (type and length included). */
function handshakeMessage(bytes: Buffer): Buffer | null | typeof INCOMPLETE {
  const fragments: Buffer[] = [];
  let joined = 0;
  let messageBytes = -1;
  let at = 0;
  for (;;) {
    if (bytes.length < at + RECORD_HEADER_BYTES) return INCOMPLETE;
    if (bytes[at] !== HANDSHAKE) return null;
    const length = bytes.readUInt16BE(at + 3);
    if (length === 0 || length > RECORD_MAX_BYTES) return null;
    const end = at + RECORD_HEADER_BYTES + length;
    if (bytes.length < end) return INCOMPLETE;
    fragments.push(bytes.subarray(at + RECORD_HEADER_BYTES, end));
    joined += length;
    at = end;
    if (messageBytes === -1 && joined >= 4) {
      const head = fragments.length === 1 ? fragments[0]! : Buffer.concat(fragments, joined);
      if (head[0] !== CLIENT_HELLO) return null;
      messageBytes = 4 + head.readUIntBE(1, 3);
      if (messageBytes > CLIENT_HELLO_MAX_BYTES) return null;
    }
    if (messageBytes !== -1 && joined >= messageBytes) {
      return Buffer.concat(fragments, joined).subarray(0, messageBytes);
    }
  }
}

/** The host name in a whole ClientHello message (`hello[0]` is its type). */
function serverName(hello: Buffer): string | null {
  const end = hello.length;
  // type (1), length (3), version (2), random (32)
  let at = 4 + 2 + 32;
  const skip = (lengthBytes: 1 | 2): boolean => {
    if (at + lengthBytes > end) return false;
    at += lengthBytes + hello.readUIntBE(at, lengthBytes);
    return at <= end;
  };
  // session id, cipher suites, compression methods
  if (!skip(1) || !skip(2) || !skip(1) || at + 2 > end) return null;
  const extensionsEnd = Math.min(end, at + 2 + hello.readUInt16BE(at));
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    at += 4;
    if (type === SERVER_NAME) return hostName(hello, at, Math.min(extensionsEnd, at + length));
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
