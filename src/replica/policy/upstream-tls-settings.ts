/**
 * A location's `proxy_ssl_*` made ready for its connections (ngx_http_proxy_set_ssl): one TLS context
 * per settings object of the configuration — protocols and ciphers as the edge maps `ssl_protocols`
 * and `ssl_ciphers`, the client certificate and key (opened with `proxy_ssl_password_file`), and, when
 * `proxy_ssl_verify` is on, the trusted CAs and CRL.
 */
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { keyPassphrase } from '../../config/proxy-ssl-merge.ts';
import type { ProxySsl } from '../../engine/http/proxy-ssl.ts';
import type { RequestContext } from '../../engine/variables/request-context.ts';
import type { UpstreamTls, UpstreamTlsSettings } from '../http/contract/upstream-tls.ts';
import { cipherList, protocolOptions } from '../http/edge/tls-contexts.ts';

const made = new WeakMap<ProxySsl, UpstreamTlsSettings>();
let nextId = 1;

/**
 * A request's TLS to its servers: its location's settings, and `proxy_ssl_name` evaluated with its
 * variables when it connects (null: `$proxy_host`).
 */
export function upstreamTls(ssl: ProxySsl, ctx: RequestContext | undefined): UpstreamTls {
  const name = ssl.name;
  return {
    settings: upstreamTlsSettings(ssl),
    name: name === null || ctx === undefined ? null : () => name(ctx),
  };
}

/** The settings for `ssl`, made on first use. */
export function upstreamTlsSettings(ssl: ProxySsl): UpstreamTlsSettings {
  let settings = made.get(ssl);
  if (settings === undefined) {
    settings = {
      context: createSecureContext(contextOptions(ssl)),
      serverName: ssl.serverName,
      verifyDepth: ssl.verify ? ssl.verifyDepth : null,
      sessionReuse: ssl.sessionReuse,
      id: nextId++,
    };
    made.set(ssl, settings);
  }
  return settings;
}

const PEM_CRL = /-----BEGIN X509 CRL-----[^-]*-----END X509 CRL-----/g;

/** Every CRL of a file, as X509_load_crl_file loads them (Node's `crl` string takes only the first). */
function eachCrl(pem: string): string[] {
  return [...pem.matchAll(PEM_CRL)].map(([text]) => text);
}

function contextOptions(ssl: ProxySsl): SecureContextOptions {
  const options: SecureContextOptions = {
    ...protocolOptions(ssl.protocols),
    ciphers: cipherList(ssl.ciphers),
  };
  if (ssl.certificate !== null && ssl.certificateKey !== null) {
    options.cert = ssl.certificate;
    options.key = ssl.certificateKey;
    // the configuration checked that one opens it
    const passphrase = keyPassphrase(ssl);
    if (passphrase !== null && passphrase !== undefined) options.passphrase = passphrase;
  }
  // without proxy_ssl_verify nginx loads neither (nothing is verified)
  if (ssl.verify && ssl.trustedCertificate !== null) {
    options.ca = ssl.trustedCertificate;
    if (ssl.crl !== null) options.crl = eachCrl(ssl.crl);
  }
  return options;
}
