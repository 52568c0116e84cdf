/**
 * ngx_http_ssl_module's variables and the client certificate's outcome, read from a TLS connection
 * once (every request on it shares them) and only when a request asks.
 *
 * The client certificate is what the handshake with the SNI-selected server left: a server that does
 * not verify clients does not ask for one (nginx sets the verify mode per SNI server), so a certificate
 * a client sent anyway reads as none (`NONE`, empty DNs), as in nginx.
 */
import type { TLSSocket } from 'node:tls';
import type { VerifyError } from '../../../engine/http/client-verify.ts';
import type { ClientConnection, ConnectionTls, Handshake } from '../contract/client-connection.ts';
import { ClientCertFacts } from './client-cert-facts.ts';
import { cipherNames, groupNames } from './openssl-names.ts';

/** The connection's TLS facts; null for a plain connection. */
export function connectionTls(connection: ClientConnection | null): ConnectionTls | null {
  if (connection === null) return null;
  const socket = connection.socket as TLSSocket;
  if (socket.encrypted !== true) return null;
  connection.tls ??= new TlsFacts(socket, connection.handshake);
  return connection.tls;
}

/** What every request on one TLS connection reads of it; the costlier values when first asked. */
class TlsFacts implements ConnectionTls {
  readonly protocol: string;
  readonly cipher: string;
  readonly serverName: string;
  readonly clientVerify: string;
  readonly sessionReused: string;
  readonly sessionId: string;
  readonly alpnProtocol: string;
  readonly present: boolean;
  readonly error: VerifyError | null;
  readonly negotiatedName: string | null;
  readonly #cert: ClientCertFacts;
  readonly #handshake: Handshake | null;
  #ciphers: string | undefined;
  #curves: string | undefined;

  constructor(socket: TLSSocket, handshake: Handshake | null) {
    const asked = handshake !== null && handshake.verify !== 'off';
    const peer = asked ? socket.getPeerX509Certificate() : undefined;
    const error = peer === undefined ? null : verifyError(socket, handshake!.verifyDepth);
    this.protocol = socket.getProtocol() ?? '';
    this.cipher = socket.getCipher()?.name ?? '';
    this.serverName = typeof socket.servername === 'string' ? socket.servername : '';
    this.clientVerify = peer === undefined ? 'NONE' : error === null ? 'SUCCESS' : `FAILED:${error.text}`;
    this.sessionReused = socket.isSessionReused() ? 'r' : '.';
    this.sessionId = sessionIdOf(socket.getSession());
    this.alpnProtocol = typeof socket.alpnProtocol === 'string' ? socket.alpnProtocol : '';
    this.present = peer !== undefined;
    this.error = error;
    this.negotiatedName = handshake?.negotiatedName ?? null;
    this.#cert = new ClientCertFacts(peer);
    this.#handshake = handshake;
  }

  get ciphers(): string {
    this.#ciphers ??= cipherNames(this.#handshake?.offeredCiphers ?? NOTHING);
    return this.#ciphers;
  }

  get curves(): string {
    this.#curves ??= groupNames(this.#handshake?.offeredGroups ?? NOTHING);
    return this.#curves;
  }

  get clientSubjectDn(): string {
    return this.#cert.subjectDn;
  }

  get clientIssuerDn(): string {
    return this.#cert.issuerDn;
  }

  get clientSubjectDnLegacy(): string {
    return this.#cert.subjectDnLegacy;
  }

  get clientIssuerDnLegacy(): string {
    return this.#cert.issuerDnLegacy;
  }

  get clientRawCert(): string {
    return this.#cert.rawCert;
  }

  get clientSerial(): string {
    return this.#cert.serial;
  }

  get clientFingerprint(): string {
    return this.#cert.fingerprint;
  }

  get clientVStart(): string {
    return this.#cert.validFrom;
  }

  get clientVEnd(): string {
    return this.#cert.validTo;
  }

  get clientVEndMs(): number {
    return this.#cert.validToMs;
  }
}

const NOTHING: Buffer = Buffer.alloc(0);

/**
 * The session ID (hex) in OpenSSL's DER encoding of a session (SSL_SESSION_ASN1: a SEQUENCE of the
 * version, the protocol, the cipher, then the ID as an OCTET STRING); `""` when there is none.
 */
export function sessionIdOf(der: Buffer | undefined): string {
  if (der === undefined) return '';
  let at = 0;
  const header = (tag: number): number => {
    if (der[at] !== tag || at + 2 > der.length) return -1;
    let length = der[at + 1]!;
    at += 2;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      if (bytes > 3 || at + bytes > der.length) return -1;
      length = der.readUIntBE(at, bytes);
      at += bytes;
    }
    return at + length <= der.length ? length : -1;
  };
  if (header(0x30) === -1) return '';
  for (const tag of [0x02, 0x02, 0x04]) {
    const length = header(tag);
    if (length === -1) return '';
    at += length;
  }
  const length = header(0x04);
  return length === -1 ? '' : der.toString('hex', at, at + length);
}

/** OpenSSL's X509_V_ERR_* for Node's codes, with X509_verify_cert_error_string's text (OpenSSL 3). */
const VERIFY_ERRORS: Readonly<Record<string, VerifyError>> = {
  UNABLE_TO_GET_ISSUER_CERT: { code: 2, text: 'unable to get issuer certificate' },
  CERT_SIGNATURE_FAILURE: { code: 7, text: 'certificate signature failure' },
  CERT_NOT_YET_VALID: { code: 9, text: 'certificate is not yet valid' },
  CERT_HAS_EXPIRED: { code: 10, text: 'certificate has expired' },
  DEPTH_ZERO_SELF_SIGNED_CERT: { code: 18, text: 'self-signed certificate' },
  SELF_SIGNED_CERT_IN_CHAIN: { code: 19, text: 'self-signed certificate in certificate chain' },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { code: 20, text: 'unable to get local issuer certificate' },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { code: 21, text: 'unable to verify the first certificate' },
  CERT_CHAIN_TOO_LONG: { code: 22, text: 'certificate chain too long' },
  CERT_REVOKED: { code: 23, text: 'certificate revoked' },
  INVALID_CA: { code: 24, text: 'invalid CA certificate' },
  INVALID_PURPOSE: { code: 26, text: 'unsupported certificate purpose' },
  CERT_UNTRUSTED: { code: 27, text: 'certificate not trusted' },
  CERT_REJECTED: { code: 28, text: 'certificate rejected' },
};

const CHAIN_TOO_LONG = VERIFY_ERRORS.CERT_CHAIN_TOO_LONG!;

/**
 * The handshake's verification result, and `ssl_verify_depth` (OpenSSL's verify depth, which Node
 * does not expose): a verified chain with more CA certificates above the client's than the depth
 * allows fails as OpenSSL fails it.
 */
function verifyError(socket: TLSSocket, depth: number): VerifyError | null {
  // Node's types say Error; at run time it is OpenSSL's code as a string
  const reason: unknown = socket.authorizationError;
  if (reason) {
    const code = typeof reason === 'string' ? reason : ((reason as { code?: string }).code ?? '');
    return VERIFY_ERRORS[code] ?? { code: 0, text: String(code || reason) };
  }
  let above = 0;
  let cert = socket.getPeerCertificate(true);
  while (cert.issuerCertificate !== undefined && cert.issuerCertificate !== cert) {
    cert = cert.issuerCertificate;
    above++;
  }
  return above > depth ? CHAIN_TOO_LONG : null;
}
