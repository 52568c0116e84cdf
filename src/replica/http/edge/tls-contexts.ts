/**
 * A server's `ssl_*` settings as node:tls options. The default server of a TLS address makes the
 * handshake's protocol, cipher and session choices (nginx's SNI switch of SSL_CTX keeps them); the
 * server SNI selects gives its certificates and client CA.
 */
import { constants } from 'node:crypto';
import type { SecureContextOptions } from 'node:tls';
import type { SslConf } from '../../../config/model.ts';

const VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
type Version = (typeof VERSIONS)[number];
const NO_VERSION: Readonly<Record<Version, number>> = {
  TLSv1: constants.SSL_OP_NO_TLSv1,
  'TLSv1.1': constants.SSL_OP_NO_TLSv1_1,
  'TLSv1.2': constants.SSL_OP_NO_TLSv1_2,
  'TLSv1.3': constants.SSL_OP_NO_TLSv1_3,
};

/**
 * OpenSSL's TLSv1.3 suites, which nginx leaves in place: `ssl_ciphers` is OpenSSL's cipher list, for
 * TLSv1.2 and below. Node reads one string for both and turns TLSv1.3 off when it names no TLSv1.3
 * suite, so the defaults are added back.
 */
const TLS13_DEFAULT_SUITES = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256';

/**
 * nginx's protocol list (`ssl_protocols`, `proxy_ssl_protocols`) as OpenSSL's range and flags: a gap
 * inside the range (TLSv1 TLSv1.2) is closed by its SSL_OP_NO_* flag. nginx's TLSv1/TLSv1.1 work only
 * where OpenSSL's security level allows them.
 */
export function protocolOptions(
  protocols: readonly string[],
): Required<Pick<SecureContextOptions, 'minVersion' | 'maxVersion' | 'secureOptions'>> {
  const enabled = VERSIONS.filter((v) => protocols.includes(v));
  let secureOptions = 0;
  for (const v of VERSIONS) {
    const i = VERSIONS.indexOf(v);
    if (!enabled.includes(v) && i > VERSIONS.indexOf(enabled[0]!) && i < VERSIONS.indexOf(enabled.at(-1)!))
      secureOptions |= NO_VERSION[v];
  }
  return { minVersion: enabled[0] ?? 'TLSv1.2', maxVersion: enabled.at(-1) ?? 'TLSv1.3', secureOptions };
}

/** An OpenSSL cipher list (TLSv1.2 and below) as Node's one string, TLSv1.3's suites kept. */
export function cipherList(ciphers: string): string {
  return /(^|:)TLS_/.test(ciphers) ? ciphers : `${TLS13_DEFAULT_SUITES}:${ciphers}`;
}

/** What the default server decides of every handshake on its address: protocols, ciphers, sessions. */
export function handshakeOptions(ssl: SslConf): SecureContextOptions {
  const protocols = protocolOptions(ssl.protocols);
  let secureOptions = protocols.secureOptions;
  if (!ssl.sessionTickets) secureOptions |= constants.SSL_OP_NO_TICKET;
  return {
    minVersion: protocols.minVersion,
    maxVersion: protocols.maxVersion,
    ciphers: cipherList(ssl.ciphers),
    honorCipherOrder: ssl.preferServerCiphers,
    ecdhCurve: ssl.ecdhCurve,
    ...(ssl.dhparam === null ? {} : { dhparam: ssl.dhparam }),
    sessionTimeout: ssl.sessionTimeoutS,
    secureOptions,
  };
}

/** What SNI changes: the server's certificates (one per key type) and the CAs clients are verified by. */
export function certificateOptions(ssl: SslConf): SecureContextOptions {
  return {
    cert: ssl.certificates.map((c) => c.cert),
    key: ssl.certificates.map((c) => c.key),
    ...(ssl.clientCertificate === null ? {} : { ca: distinctCertificates(ssl.clientCertificate) }),
  };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----/g;

/**
 * Each certificate once: node names every `ca` certificate in the CertificateRequest, where nginx's
 * SSL_load_client_CA_file names a CA once however often its file repeats it.
 */
function distinctCertificates(pem: string): string | string[] {
  const distinct = new Map<string, string>();
  for (const [text] of pem.matchAll(PEM_CERTIFICATE)) {
    const key = text.replace(/\s+/g, '');
    if (!distinct.has(key)) distinct.set(key, text);
  }
  return distinct.size === 0 ? pem : [...distinct.values()];
}
