/**
 * ngx_http_ssl_module's directives (http and server levels) and `http2` (nginx 1.25.1+). Files are
 * read here (relative paths from the main configuration file's folder, nginx's conf prefix); what the replica cannot honour (OCSP
 * stapling, early data, …) fails the load as "not supported", never silently.
 */

import { atoi, parseTimeMs } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { SslSessionCache, SslVerifyClient } from '../model.ts';
import type { SslBuilder, SslFile } from '../ssl.ts';
import { duplicate, flagArg, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const LEVELS = ['http', 'server'] as const;
const PROTOCOLS = new Set(['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']);
const VERIFY: readonly SslVerifyClient[] = ['off', 'on', 'optional', 'optional_no_ca'];

function sslOf(scope: Scope): SslBuilder {
  return (scope.server ?? scope.http)!.ssl;
}

/** Reads a file named by `d`'s first argument, in nginx's words when it cannot. */
export function readSslFile(d: Directive, scope: Scope, what: string): SslFile {
  const path = d.args[0]!;
  if (path.startsWith('data:') || path.startsWith('engine:'))
    throw configError(`the "${path.split(':')[0]}:" form of "${d.name}" is not supported by limitswitch`, d);
  if (path.includes('$')) throw configError(`variables in "${d.name}" are not supported by limitswitch`, d);
  const full = scope.session.fullPath(path);
  let pem: string;
  try {
    pem = scope.session.readFile(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    const why =
      code === 'ENOENT' ? 'No such file or directory' : code === 'EACCES' ? 'Permission denied' : code;
    throw configError(`cannot load ${what} "${full}": BIO_new_file() failed (SSL: ${why})`, d);
  }
  if (!pem.includes('-----BEGIN '))
    throw configError(`cannot load ${what} "${full}": PEM_read_bio failed (no PEM data)`, d);
  return { path: full, pem, source: ref(d) };
}

function certificate(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  ssl.certificates ??= [];
  ssl.certificates.push(readSslFile(d, scope, 'certificate'));
}

function certificateKey(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  ssl.certificateKeys ??= [];
  ssl.certificateKeys.push(readSslFile(d, scope, 'certificate key'));
}

function clientCertificate(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  const file = readSslFile(d, scope, 'certificate');
  // both name CAs the client's certificate is verified against
  ssl.clientCertificate =
    ssl.clientCertificate === null ? file : { ...file, pem: `${ssl.clientCertificate.pem}\n${file.pem}` };
}

function protocols(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.protocols !== null) throw duplicate(d);
  for (const name of d.args) if (!PROTOCOLS.has(name)) throw configError(`invalid value "${name}"`, d);
  ssl.protocols = [...d.args];
}

/** A one-string directive stored under `key`. */
function text(key: 'ciphers' | 'ecdhCurve') {
  return (d: Directive, scope: Scope): void => {
    const ssl = sslOf(scope);
    if (ssl[key] !== null) throw duplicate(d);
    ssl[key] = d.args[0]!;
  };
}

function dhparam(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.dhparam !== null) throw duplicate(d);
  ssl.dhparam = readSslFile(d, scope, 'DH parameters');
}

/** A flag directive stored under `key`; a second one at the same level is a duplicate. */
function flag(key: 'preferServerCiphers' | 'sessionTickets' | 'http2') {
  return (d: Directive, scope: Scope): void => {
    const ssl = sslOf(scope);
    if (ssl[key] !== null) throw duplicate(d);
    ssl[key] = flagArg(d);
  };
}

/** `off | none | [builtin[:size]] [shared:name:size]` (ngx_http_ssl_session_cache). */
function sessionCache(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.sessionCache !== null) throw duplicate(d);
  let kind: SslSessionCache | null = null;
  for (const arg of d.args) {
    if ((arg === 'off' || arg === 'none') && d.args.length === 1) kind = arg;
    else if (/^builtin(:\d+)?$/.test(arg)) kind ??= 'builtin';
    else if (/^shared:[^:]+:\d+[kKmM]?$/.test(arg)) kind = 'shared';
    else throw configError(`invalid session cache "${arg}"`, d);
  }
  ssl.sessionCache = kind;
}

function sessionTimeout(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.sessionTimeoutS !== null) throw duplicate(d);
  const ms = parseTimeMs(d.args[0]!);
  if (ms === null) throw configError('invalid value', d);
  ssl.sessionTimeoutS = Math.floor(ms / 1000);
}

function verifyClient(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.verifyClient !== null) throw duplicate(d);
  const value = VERIFY.find((v) => v === d.args[0]);
  if (value === undefined) throw configError(`invalid value "${d.args[0]}"`, d);
  ssl.verifyClient = value;
}

function verifyDepth(d: Directive, scope: Scope): void {
  const ssl = sslOf(scope);
  if (ssl.verifyDepth !== null) throw duplicate(d);
  const depth = atoi(d.args[0]!);
  if (depth === null) throw configError('invalid number', d);
  ssl.verifyDepth = depth;
}

/** Accepted only as `off`, the default: `on` asks for what the replica does not do. */
function offOnly(d: Directive): void {
  if (flagArg(d))
    throw configError(`"${d.name} on" is not supported by limitswitch (only "off", the default)`, d);
}

export const sslDirectives: readonly DirectiveSpec[] = [
  { name: 'ssl_certificate', contexts: LEVELS, args: [1], handle: certificate },
  { name: 'ssl_certificate_key', contexts: LEVELS, args: [1], handle: certificateKey },
  { name: 'ssl_protocols', contexts: LEVELS, args: '1+', handle: protocols },
  { name: 'ssl_ciphers', contexts: LEVELS, args: [1], handle: text('ciphers') },
  { name: 'ssl_ecdh_curve', contexts: LEVELS, args: [1], handle: text('ecdhCurve') },
  { name: 'ssl_dhparam', contexts: LEVELS, args: [1], handle: dhparam },
  { name: 'ssl_prefer_server_ciphers', contexts: LEVELS, args: [1], handle: flag('preferServerCiphers') },
  { name: 'ssl_session_cache', contexts: LEVELS, args: [1, 2], handle: sessionCache },
  { name: 'ssl_session_timeout', contexts: LEVELS, args: [1], handle: sessionTimeout },
  { name: 'ssl_session_tickets', contexts: LEVELS, args: [1], handle: flag('sessionTickets') },
  { name: 'ssl_client_certificate', contexts: LEVELS, args: [1], handle: clientCertificate },
  { name: 'ssl_trusted_certificate', contexts: LEVELS, args: [1], handle: clientCertificate },
  { name: 'ssl_verify_client', contexts: LEVELS, args: [1], handle: verifyClient },
  { name: 'ssl_verify_depth', contexts: LEVELS, args: [1], handle: verifyDepth },
  { name: 'ssl_stapling', contexts: LEVELS, args: [1], handle: offOnly },
  { name: 'ssl_early_data', contexts: LEVELS, args: [1], handle: offOnly },
  { name: 'http2', contexts: LEVELS, args: [1], handle: flag('http2') },
];
