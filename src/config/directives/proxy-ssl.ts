/**
 * ngx_http_proxy_module's `proxy_ssl_*` directives (http, server, location): how a location's requests
 * to an `https://` upstream make their TLS connections. Files are read here, as `ssl_certificate`'s
 * are (ssl.ts); what the replica cannot honour fails the load with its `file:line`, never silently:
 * `proxy_ssl_conf_command` (node:tls has no SSL_CONF_cmd), variables in `proxy_ssl_certificate`,
 * SSLv2 and SSLv3.
 */

import { atoi } from '../../engine/scalar-values.ts';
import type { ProxySslBuilder } from '../builders.ts';
import { configError, errnoSuffix } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { complexValue, duplicate, flagArg, levelOf } from './helpers.ts';
import { readSslFile } from './ssl.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const LEVELS = ['http', 'server', 'location'] as const;
/** ngx_http_proxy_ssl_protocols: the names it takes; SSLv2/SSLv3 are not in Node's OpenSSL. */
const PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
const OLD_PROTOCOLS = new Set(['SSLv2', 'SSLv3']);

function sslOf(scope: Scope): ProxySslBuilder {
  return levelOf(scope).proxySsl;
}

/** Sets `key` once per level: a second one is nginx's "is duplicate". */
function setOnce<K extends keyof ProxySslBuilder>(
  d: Directive,
  scope: Scope,
  key: K,
  value: ProxySslBuilder[K],
): void {
  const ssl = sslOf(scope);
  if (ssl[key] !== undefined) throw duplicate(d);
  ssl[key] = value;
}

type FlagKey = 'verify' | 'serverName' | 'sessionReuse';

function flag(key: FlagKey) {
  return (d: Directive, scope: Scope): void => setOnce(d, scope, key, flagArg(d));
}

/** A file's PEM text (`proxy_ssl_trusted_certificate`, `_crl`, `_certificate`, `_certificate_key`). */
function file(key: 'trustedCertificate' | 'crl' | 'certificate' | 'certificateKey', what: string) {
  return (d: Directive, scope: Scope): void => {
    const ssl = sslOf(scope);
    if (ssl[key] !== undefined) throw duplicate(d);
    const read = readSslFile(d, scope, what);
    ssl[key] = read.pem;
    const named = { path: read.path, source: read.source };
    if (key === 'certificate') ssl.certificateFile = named;
    if (key === 'certificateKey') ssl.certificateKeyFile = named;
  };
}

function verifyDepth(d: Directive, scope: Scope): void {
  const depth = atoi(d.args[0]!);
  if (depth === null) throw configError(`"${d.name}" directive invalid number`, d);
  setOnce(d, scope, 'verifyDepth', depth);
}

/** `proxy_ssl_name value` — a complex value, evaluated per request. */
function name(d: Directive, scope: Scope): void {
  complexValue(d.args[0]!, d, scope);
  setOnce(d, scope, 'name', d.args[0]!);
}

function ciphers(d: Directive, scope: Scope): void {
  setOnce(d, scope, 'ciphers', d.args[0]!);
}

/** ngx_conf_set_bitmask_slot over ngx_http_proxy_ssl_protocols. */
function protocols(d: Directive, scope: Scope): void {
  for (const arg of d.args) {
    if (OLD_PROTOCOLS.has(arg))
      throw configError(`"${arg}" in "${d.name}" is not supported by limitswitch (not in its OpenSSL)`, d);
    if (!PROTOCOLS.includes(arg)) throw configError(`invalid value "${arg}"`, d);
  }
  setOnce(
    d,
    scope,
    'protocols',
    PROTOCOLS.filter((p) => d.args.includes(p)),
  );
}

/** ngx_ssl_read_password_file: one password a line (CR LF or LF), empty lines skipped. */
function passwordFile(d: Directive, scope: Scope): void {
  const full = scope.session.fullPath(d.args[0]!);
  let text: string;
  try {
    text = scope.session.readFile(full);
  } catch (err) {
    throw configError(`open() "${full}" failed ${errnoSuffix(err)}`, d);
  }
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  setOnce(
    d,
    scope,
    'passwords',
    lines.filter((line) => line !== ''),
  );
}

/** nginx hands these to OpenSSL's SSL_CONF_cmd, which node:tls does not reach. */
function confCommand(d: Directive): void {
  throw configError(`"${d.name}" is not supported by limitswitch`, d);
}

/** A `proxy_ssl_certificate` with variables (nginx 1.21.0+) would load a certificate per request. */
function certificateFile(key: 'certificate' | 'certificateKey', what: string) {
  const read = file(key, what);
  return (d: Directive, scope: Scope): void => {
    if (d.args[0]!.includes('$'))
      throw configError(`variables in "${d.name}" are not supported by limitswitch`, d);
    read(d, scope);
  };
}

export const proxySslDirectives: readonly DirectiveSpec[] = [
  { name: 'proxy_ssl_verify', contexts: LEVELS, args: [1], handle: flag('verify') },
  { name: 'proxy_ssl_verify_depth', contexts: LEVELS, args: [1], handle: verifyDepth },
  {
    name: 'proxy_ssl_trusted_certificate',
    contexts: LEVELS,
    args: [1],
    handle: file('trustedCertificate', 'certificate'),
  },
  { name: 'proxy_ssl_crl', contexts: LEVELS, args: [1], handle: file('crl', 'CRL') },
  { name: 'proxy_ssl_server_name', contexts: LEVELS, args: [1], handle: flag('serverName') },
  { name: 'proxy_ssl_name', contexts: LEVELS, args: [1], handle: name },
  {
    name: 'proxy_ssl_certificate',
    contexts: LEVELS,
    args: [1],
    handle: certificateFile('certificate', 'certificate'),
  },
  {
    name: 'proxy_ssl_certificate_key',
    contexts: LEVELS,
    args: [1],
    handle: certificateFile('certificateKey', 'certificate key'),
  },
  { name: 'proxy_ssl_password_file', contexts: LEVELS, args: [1], handle: passwordFile },
  { name: 'proxy_ssl_protocols', contexts: LEVELS, args: '1+', handle: protocols },
  { name: 'proxy_ssl_ciphers', contexts: LEVELS, args: [1], handle: ciphers },
  { name: 'proxy_ssl_session_reuse', contexts: LEVELS, args: [1], handle: flag('sessionReuse') },
  { name: 'proxy_ssl_conf_command', contexts: LEVELS, args: [2], handle: confCommand },
];
