/**
 * Parsers for annotation and ConfigMap values. Each returns the parsed value or throws
 * `RL_ERR_ANNOTATION_INVALID` with a message that names the value and what was expected; the caller adds the
 * object and field. Syntax follows nginx where the value ends up in a directive (rates, sizes, codes).
 */

import { parseComplexValue } from '../../engine/complex-value.ts';
import type { LogLevel } from '../../engine/log-line.ts';
import { parseCidr } from '../../engine/net/address-text.ts';
import { hasCode, LimitswitchError } from '../../shared/errors.ts';
import { checkSnippet } from './snippet-check.ts';

/** `RL_ERR_ANNOTATION_INVALID`: the caller adds which object and field. */
export function invalidValueError(text: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_ANNOTATION_INVALID', text);
}

function invalid(raw: string, expected: string): never {
  throw invalidValueError(`invalid value "${raw}": ${expected}`);
}

/** A `limit_req_zone` rate as NIC accepts it: a positive integer with `r/s` or `r/m`. */
export interface Rate {
  readonly count: number;
  readonly unit: 'r/s' | 'r/m';
}

export function parseRate(raw: string): Rate {
  const m = /^([1-9][0-9]{0,8})(r\/s|r\/m)$/.exec(raw.trim());
  if (!m) invalid(raw, 'must be a rate like 10r/s or 600r/m');
  return { count: Number(m[1]), unit: m[2] as Rate['unit'] };
}

export function formatRate(rate: Rate): string {
  return `${rate.count}${rate.unit}`;
}

/** A zone size as nginx parses it (`ngx_parse_size`: bytes, `k`, `m`), at least 32k (8 pages). */
export function parseZoneSize(raw: string): string {
  const text = raw.trim();
  const m = /^([0-9]{1,9})([kKmM]?)$/.exec(text);
  if (!m) invalid(raw, 'must be a size like 10m or 512k');
  const unit = m[2]!.toLowerCase();
  const bytes = Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 * 1024 : 1);
  if (bytes < 32768) invalid(raw, 'a zone must be at least 32k');
  return text;
}

/** Go's `strconv.ParseBool`, which NIC uses for its boolean annotations. */
export function parseBool(raw: string): boolean {
  const text = raw.trim();
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return invalid(raw, 'must be true or false');
}

function parseInteger(raw: string, min: number, max: number, expected: string): number {
  const text = raw.trim();
  if (!/^[0-9]{1,9}$/.test(text)) invalid(raw, expected);
  const n = Number(text);
  if (n < min || n > max) invalid(raw, expected);
  return n;
}

/** `burst=`/`delay=` counts; 0 means "not set" (nginx rejects `burst=0`, so it is left out). */
export function parseCount(raw: string): number {
  return parseInteger(raw, 0, 999_999_999, 'must be a non-negative integer');
}

/** ingress-nginx's `limit-rps`/`limit-rpm`: 0 turns the limit off. */
export function parseRequestCount(raw: string): number {
  return parseInteger(raw, 0, 999_999_999, 'must be a non-negative integer');
}

export function parseMultiplier(raw: string): number {
  return parseInteger(raw, 1, 1_000_000, 'must be a positive integer');
}

/** `limit_req_status`: nginx accepts 400..599. */
export function parseStatusCode(raw: string): number {
  return parseInteger(raw, 400, 599, 'must be an HTTP status code between 400 and 599');
}

export function parseLogLevel(raw: string): LogLevel {
  const text = raw.trim();
  if (text === 'info' || text === 'notice' || text === 'warn' || text === 'error') return text;
  return invalid(raw, 'must be one of info, notice, warn, error');
}

/** A `limit_req_zone` key: nginx text with `$var`/`${var}` variables. */
export function parseKey(raw: string): string {
  const text = raw.trim();
  if (text === '') invalid(raw, 'must not be empty');
  try {
    parseComplexValue(text);
  } catch (err) {
    if (hasCode(err, 'RL_ERR_VALUE_SYNTAX')) invalid(raw, err.message);
    throw err;
  }
  return text;
}

/**
 * Comma-separated addresses or CIDRs, each read as the generated `geo` or `set_real_ip_from` line will
 * read it (ngx_ptocidr): `127.1`, `0x7f.0.0.1`, zone ids and `/33` are refused here, on the object that
 * carries them, rather than by the config check; `010.0.0.1` is 10.0.0.1, as in nginx.
 */
function cidrItems(raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    if (parseCidr(item) === null) {
      throw invalidValueError(`invalid value "${raw}": "${item}" is not an IP address or CIDR`);
    }
  }
  return items;
}

/** ingress-nginx's `limit-allowlist`: sorted and deduplicated like ingress-nginx. */
export function parseCidrList(raw: string): string[] {
  return [...new Set(cidrItems(raw))].sort();
}

/** NIC's `set-real-ip-from`: kept in order. */
export function parseCidrListInOrder(raw: string): string[] {
  return cidrItems(raw);
}

/** An HTTP header name (`real-ip-header`). */
export function parseHeaderName(raw: string): string {
  const text = raw.trim();
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(text)) invalid(raw, 'must be an HTTP header name');
  return text;
}

/** A snippet: nginx directives, checked to be complete statements that stay inside their block. */
export function parseSnippet(raw: string): string[] {
  const problem = checkSnippet(raw);
  if (problem !== null) throw invalidValueError(`invalid snippet: ${problem}`);
  // NIC splits snippets on newlines and writes each line indented; blank trailing lines are noise.
  const lines = raw.split('\n').map((line) => line.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** ingress-nginx's `RegexPathWithCapture` (`rewrite-target`, `app-root`): a path with `$1`-style captures. */
export function parsePathWithCaptures(raw: string): string {
  const text = raw.trim();
  if (!/^\/?[-._~a-zA-Z0-9/:$]*$/.test(text) || text === '')
    invalid(raw, 'must be a path of letters, digits, "-._~/:" and captures like $1');
  return text;
}

/** ingress-nginx's `URLIsValidRegex` (`permanent-redirect`, `temporal-redirect`): a URL without spaces or quotes. */
export function parseRedirectUrl(raw: string): string {
  const text = raw.trim();
  if (!/^[-._~a-zA-Z0-9/:,?&=]+$/.test(text))
    invalid(raw, 'must be a URL of letters, digits and "-._~/:,?&="');
  return text;
}

/** An HTTP status code (a redirect code's annotation; the range is the translator's to judge). */
export function parseHttpCode(raw: string): number {
  const text = raw.trim();
  if (!/^[1-9][0-9]{2}$/.test(text)) invalid(raw, 'must be an HTTP status code');
  return Number(text);
}

/** NIC's `nginx.org/rewrites`: `serviceName=tea-svc rewrite=/;serviceName=coffee-svc rewrite=/beans/`. */
export function parseRewriteList(raw: string): ReadonlyMap<string, string> {
  const rewrites = new Map<string, string>();
  for (const part of raw.split(';')) {
    const m = /^serviceName=([^\s=]+) rewrite=(\/[^\s{};$]*)$/.exec(part.trim());
    if (m === null)
      invalid(
        raw,
        `"${part.trim()}" is not "serviceName=<service> rewrite=<path>" (a path without spaces, braces, ";" or "$")`,
      );
    rewrites.set(m[1]!, m[2]!);
  }
  return rewrites;
}

/** NIC's `nginx.org/path-regex`. */
export function parsePathRegex(raw: string): 'case_sensitive' | 'case_insensitive' | 'exact' {
  const text = raw.trim();
  if (text === 'case_sensitive' || text === 'case_insensitive' || text === 'exact') return text;
  return invalid(raw, 'must be case_sensitive, case_insensitive or exact');
}
