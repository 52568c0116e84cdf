/**
 * The `proxy_ssl_*` settings as nginx merges them (ngx_http_proxy_merge_loc_conf: each inherited on
 * its own, the innermost level that sets it wins), and ngx_http_proxy_set_ssl's checks of a location
 * that speaks TLS to its servers — an `https://` `proxy_pass`, or one with variables (which may come
 * to `https://`): a certificate needs its key, and the key must open (with a password of
 * `proxy_ssl_password_file`); `proxy_ssl_verify` needs `proxy_ssl_trusted_certificate`.
 */
import { createPrivateKey } from 'node:crypto';
import { DEFAULT_PROXY_SSL, type ProxySslSettings } from '../engine/http/proxy-ssl.ts';
import type { LocationBuilder, ProxySslBuilder } from './builders.ts';
import { configError } from './config-error.ts';
import type { ProxySslConf } from './model.ts';

export const DEFAULT_PROXY_SSL_CONF: ProxySslConf = Object.freeze({
  ...DEFAULT_PROXY_SSL,
  certificateFile: null,
  certificateKeyFile: null,
});

/** The settings in force at a level that writes `level`, inside one whose settings are `parent`. */
export function inheritProxySsl(level: ProxySslBuilder, parent: ProxySslConf): ProxySslConf {
  if (Object.keys(level).length === 0) return parent;
  return Object.freeze({ ...parent, ...level });
}

/** Whether a `proxy_pass` URL may speak TLS: `https://`, or variables that may come to it. */
export function mayBeTls(url: string | null): boolean {
  return url !== null && (url.includes('$') || url.slice(0, 8).toLowerCase() === 'https://');
}

/** A location whose own `proxy_pass`, an `if`'s or `limit_except`'s may speak TLS. */
export function locationMayBeTls(location: LocationBuilder): boolean {
  if (mayBeTls(location.proxyPass) || mayBeTls(location.limitExcept?.proxyPass ?? null)) return true;
  return location.script.some((step) => step.op === 'if' && mayBeTls(step.proxyPass));
}

/** ngx_http_proxy_set_ssl's refusals, for a location that may speak TLS. */
export function checkProxySsl(conf: ProxySslConf, location: LocationBuilder): void {
  const cert = conf.certificateFile;
  if (conf.certificate !== null && cert !== null) {
    const key = conf.certificateKeyFile;
    if (conf.certificateKey === null || key === null)
      throw configError(
        `no "proxy_ssl_certificate_key" is defined for certificate "${cert.path}"`,
        cert.source,
      );
    if (keyPassphrase(conf) === null)
      throw configError(
        `cannot load certificate key "${key.path}": PEM_read_bio_PrivateKey() failed`,
        key.source,
      );
  }
  // nginx names no line here; the location is where it is to be fixed
  if (conf.verify && conf.trustedCertificate === null)
    throw configError('no proxy_ssl_trusted_certificate for proxy_ssl_verify', location.source);
}

/**
 * The password that opens the client certificate's key (undefined: it needs none), as nginx tries each
 * line of `proxy_ssl_password_file` in turn; null when none does.
 */
export function keyPassphrase(
  conf: Pick<ProxySslSettings, 'certificateKey' | 'passwords'>,
): string | undefined | null {
  const key = conf.certificateKey;
  if (key === null) return undefined;
  const tries: readonly (string | undefined)[] = conf.passwords ?? [undefined];
  for (const passphrase of tries) {
    try {
      createPrivateKey(passphrase === undefined ? { key } : { key, passphrase });
      return passphrase;
    } catch {
      // the next password
    }
  }
  return null;
}
