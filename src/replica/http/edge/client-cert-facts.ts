/**
 * The client certificate's variables (`$ssl_client_*` of ngx_http_ssl_module), each computed the
 * first time a request asks and kept for the connection's other requests. Node prints names and
 * dates with the OpenSSL calls nginx makes (X509_NAME_print_ex, ASN1_TIME_print); the rest is read
 * from the certificate's DER as nginx's calls would print it.
 */
import type { X509Certificate } from 'node:crypto';

export class ClientCertFacts {
  readonly #peer: X509Certificate | undefined;
  #pem: string | undefined;
  #fingerprint: string | undefined;

  constructor(peer: X509Certificate | undefined) {
    this.#peer = peer;
  }

  /** `$ssl_client_s_dn` / `$ssl_client_i_dn`: RFC 2253, most specific RDN first. */
  get subjectDn(): string {
    return this.#peer === undefined ? '' : rfc2253(this.#peer.subject);
  }

  get issuerDn(): string {
    return this.#peer === undefined ? '' : rfc2253(this.#peer.issuer);
  }

  /** `$ssl_client_s_dn_legacy` / `$ssl_client_i_dn_legacy`: X509_NAME_oneline's `/CN=name`. */
  get subjectDnLegacy(): string {
    return this.#peer === undefined ? '' : oneline(this.#peer.subject);
  }

  get issuerDnLegacy(): string {
    return this.#peer === undefined ? '' : oneline(this.#peer.issuer);
  }

  /** PEM_write_bio_X509: 64 base64 characters a line, each line ended by a newline. */
  get rawCert(): string {
    if (this.#peer === undefined) return '';
    this.#pem ??= this.#peer.toString();
    return this.#pem;
  }

  /** i2a_ASN1_INTEGER: two upper-case hex digits a byte (zero is `00`), `-` before a negative one. */
  get serial(): string {
    if (this.#peer === undefined) return '';
    const hex = this.#peer.serialNumber.toUpperCase();
    const negative = hex.startsWith('-');
    const digits = negative ? hex.slice(1) : hex;
    return (negative ? '-' : '') + (digits.length % 2 === 1 ? `0${digits}` : digits);
  }

  /** X509_digest with SHA-1, ngx_hex_dump'ed: lower-case, no separators. */
  get fingerprint(): string {
    if (this.#peer === undefined) return '';
    this.#fingerprint ??= this.#peer.fingerprint.replaceAll(':', '').toLowerCase();
    return this.#fingerprint;
  }

  get validFrom(): string {
    return this.#peer?.validFrom ?? '';
  }

  get validTo(): string {
    return this.#peer?.validTo ?? '';
  }

  /** The end of validity in epoch ms (ngx_ssl_parse_time over ASN1_TIME_print's text); NaN without one. */
  get validToMs(): number {
    return this.#peer === undefined ? Number.NaN : asn1TimeMs(this.#peer.validTo);
  }
}

/**
 * Node prints a name one RDN per line, most general first, values already escaped as RFC 2253
 * wants; nginx prints it most specific first, comma-separated.
 */
function rfc2253(multiline: string): string {
  return multiline.split('\n').filter(Boolean).reverse().join(',');
}

/**
 * X509_NAME_oneline: `/type=value` per RDN, most general first, values unescaped but for bytes
 * outside printable ASCII, which it writes `\xHH`.
 */
function oneline(multiline: string): string {
  let out = '';
  for (const line of multiline.split('\n')) {
    if (line === '') continue;
    const raw = line.replace(/\\(.)/g, '$1');
    out += '/';
    for (const byte of Buffer.from(raw, 'utf8')) {
      out +=
        byte < 0x20 || byte > 0x7e
          ? `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`
          : String.fromCharCode(byte);
    }
  }
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Dec  5 09:00:00 2026 GMT` (seconds may carry a fraction) to epoch ms, whole seconds; NaN if not. */
function asn1TimeMs(text: string): number {
  const m = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)? (\d{4})(?: GMT)?$/.exec(text);
  if (m === null) return Number.NaN;
  const month = MONTHS.indexOf(m[1]!);
  if (month === -1) return Number.NaN;
  return Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
}
