/**
 * The server name a TLS ClientHello asks for (RFC 6066 `server_name`), read before the handshake so
 * the connection can go to the server SNI selects with that server's whole context — certificates of
 * each key type, client CA and whether to ask for a client certificate — as nginx switches
 * SSL_CTX in its servername callback; and what a returning client offers to resume (a TLSv1.2 session
 * ID, a TLSv1.3 ticket), so that the session cache can find a TLSv1.3 session by its ticket.
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
const SUPPORTED_GROUPS = 0x000a;
const PRE_SHARED_KEY = 0x0029;
const HOST_NAME = 0x00;
const RECORD_HEADER_BYTES = 5;
/** RFC 8446 §5.1: a plaintext record carries at most 2^14 bytes. */
const RECORD_MAX_BYTES = 16_384;
/** OpenSSL's CLIENT_HELLO_MAX_LENGTH: a longer hello fails its handshake anyway. */
export const CLIENT_HELLO_MAX_BYTES = 131_396;

/** What the edge reads of a ClientHello before the handshake. */
export interface ClientHelloFacts {
  /** The SNI host name; null without one. */
  readonly serverName: string | null;
  /** `legacy_session_id`: a TLSv1.2 session to resume, or TLSv1.3's 32 random bytes (compatibility mode). */
  readonly sessionId: Buffer;
  /** The first identity of TLSv1.3's `pre_shared_key`: a ticket the server gave; null without one. */
  readonly pskIdentity: Buffer | null;
  /** `cipher_suites` as sent, 2 bytes each (`$ssl_ciphers`). */
  readonly cipherSuites: Buffer;
  /** `supported_groups` as sent, 2 bytes each (`$ssl_curves`); empty without the extension. */
  readonly supportedGroups: Buffer;
}

/** The SNI host name, null without one (or for a hello this reader cannot follow), or INCOMPLETE. */
export function clientHelloServerName(bytes: Buffer): string | null | typeof INCOMPLETE {
  const facts = readClientHello(bytes);
  return facts === null || facts === INCOMPLETE ? facts : facts.serverName;
}

/** The hello's facts, null for a hello this reader cannot follow, or INCOMPLETE. */
export function readClientHello(bytes: Buffer): ClientHelloFacts | null | typeof INCOMPLETE {
  const hello = handshakeMessage(bytes);
  if (hello === null || hello === INCOMPLETE) return hello;
  return helloFacts(hello);
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

/** The facts of a whole ClientHello message (`hello[0]` is its type). */
function helloFacts(hello: Buffer): ClientHelloFacts | null {
  const end = hello.length;
  // type (1), length (3), version (2), random (32)
  let at = 4 + 2 + 32;
  if (at + 1 > end || at + 1 + hello[at]! > end) return null;
  const sessionId = hello.subarray(at + 1, at + 1 + hello[at]!);
  const skip = (lengthBytes: 1 | 2): boolean => {
    if (at + lengthBytes > end) return false;
    at += lengthBytes + hello.readUIntBE(at, lengthBytes);
    return at <= end;
  };
  // session id, cipher suites, compression methods
  if (!skip(1)) return null;
  const suitesAt = at + 2;
  if (!skip(2)) return null;
  const cipherSuites = hello.subarray(suitesAt, at);
  if (!skip(1)) return null;
  let serverName: string | null = null;
  let sawServerName = false;
  let pskIdentity: Buffer | null = null;
  let supportedGroups = NONE;
  if (at + 2 > end) return { serverName, sessionId, pskIdentity, cipherSuites, supportedGroups };
  const extensionsEnd = Math.min(end, at + 2 + hello.readUInt16BE(at));
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    at += 4;
    const extensionEnd = Math.min(extensionsEnd, at + length);
    // the first of each counts (OpenSSL refuses a hello that repeats one)
    if (type === SERVER_NAME && !sawServerName) {
      serverName = hostName(hello, at, extensionEnd);
      sawServerName = true;
    } else if (type === PRE_SHARED_KEY) pskIdentity = firstIdentity(hello, at, extensionEnd);
    else if (type === SUPPORTED_GROUPS) supportedGroups = groupList(hello, at, extensionEnd);
    at += length;
  }
  return { serverName, sessionId, pskIdentity, cipherSuites, supportedGroups };
}

const NONE: Buffer = Buffer.alloc(0);

/** RFC 8446 §4.2.7: a 2-byte length, then 2 bytes a group; empty when it does not fit. */
function groupList(bytes: Buffer, start: number, end: number): Buffer {
  if (start + 2 > end) return NONE;
  const length = bytes.readUInt16BE(start);
  return start + 2 + length > end ? NONE : bytes.subarray(start + 2, start + 2 + length);
}

/** RFC 8446 §4.2.11: identities (2-byte list length; each a 2-byte length, the bytes, a 4-byte age). */
function firstIdentity(bytes: Buffer, start: number, end: number): Buffer | null {
  if (start + 4 > end) return null;
  const length = bytes.readUInt16BE(start + 2);
  const at = start + 4;
  return length === 0 || at + length > end ? null : bytes.subarray(at, at + length);
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
