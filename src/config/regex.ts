/**
 * Regular expressions of `location ~`, `server_name ~`, `map` and `if`: nginx runs them on PCRE,
 * limitswitch on RE2, whose time is linear in the subject whatever the pattern (a backtracking engine,
 * JavaScript's included, can spend seconds on one header: `^(\w+\s?)+$` against 31 characters). A
 * pattern is compiled once, here, where the configuration writes it, and the engine receives the
 * compiled object behind its own interface (`NginxRegex`); a pattern RE2 cannot run is refused at load.
 *
 * This is the one file that imports `re2`. It lives in the config layer because the config layer is
 * where a pattern is checked and where the model is compiled into engine objects: a refusal needs the
 * directive's file:line, and the engine must stay free of native code and I/O.
 *
 * RE2 reads PCRE's spellings itself: `(?P<name>…)`, `(?<name>…)`, a leading or inner `(?i)`, `\x{hh}`,
 * `\Q…\E`, `[[:alpha:]]`. Subjects are the engine's one-character-per-byte strings; RE2 matches them
 * character by character, so a byte 0x80–0xFF is one character to `.`, `[^…]` and captures, and never
 * `\w`, `\d` or `\s` (which are ASCII, as in nginx's PCRE).
 */
import { Buffer } from 'node:buffer';
import RE2 from 're2';
import type { NginxRegex, RegexCaptures } from '../engine/nginx-regex.ts';
import { configError } from './config-error.ts';
import type { SourceRef } from './model.ts';

/**
 * PCRE constructs RE2 refuses because only backtracking can run them: RE2's complaint (`reason`) →
 * what the construct is called. `pattern` is consulted where RE2 names only a prefix (`(?P`).
 */
const BACKTRACKING: readonly {
  readonly test: (reason: string, pattern: string) => boolean;
  readonly what: string;
}[] = [
  {
    test: (reason, pattern) =>
      /^invalid escape sequence: \\[1-9gk]/.test(reason) ||
      (reason === 'invalid perl operator: (?P' && pattern.includes('(?P=')),
    what: 'a backreference',
  },
  { test: (reason) => /^invalid perl operator: \(\?[=!]$/.test(reason), what: 'a lookahead assertion' },
  { test: (reason) => /^invalid perl operator: \(\?<[=!]$/.test(reason), what: 'a lookbehind assertion' },
  { test: (reason) => reason === 'invalid perl operator: (?>', what: 'an atomic group' },
  {
    test: (reason) => /^bad repetition operator: (?:[*+?]|\{\d+(?:,\d*)?\})\+$/.test(reason),
    what: 'a possessive quantifier',
  },
  { test: (reason) => reason === 'invalid perl operator: (?(', what: 'a conditional group' },
  {
    test: (reason, pattern) =>
      /^invalid perl operator: \(\?(?:R|&|[-+]?\d)/.test(reason) ||
      (reason === 'invalid perl operator: (?P' && pattern.includes('(?P>')),
    what: 'a recursion or subroutine call',
  },
];

/**
 * Compiles a pattern for the engine (`caseless`: `~*`, and every `server_name` regex); a pattern RE2
 * cannot run throws nginx's `[emerg]` at `at`: `invalid regex "P": reason`.
 */
export function compileRegex(pattern: string, caseless: boolean, at: SourceRef): NginxRegex {
  try {
    return new Re2Regex(new RE2(pattern, caseless ? 'i' : ''), pattern, caseless);
  } catch (err) {
    throw configError(
      refusal(pattern, asWritten(err instanceof Error ? err.message : String(err), pattern)),
      at,
    );
  }
}

/**
 * A compiled pattern as the engine calls it. The binding turns a string argument into UTF-8 in a
 * buffer it makes and tracks itself, which costs ~1.4 µs a call on a string it has not seen last (every
 * request's are new); a Buffer made here costs ~0.1 µs and is read the same way, so `test` gives it
 * one. `exec`, whose results are strings only when given a string, is called by the engine only for
 * captures it reads (`$1` after a map matched).
 */
class Re2Regex implements NginxRegex {
  readonly #re: RE2;
  /** As written, for messages and comparisons of configurations. */
  readonly source: string;
  readonly caseless: boolean;

  constructor(re: RE2, source: string, caseless: boolean) {
    this.#re = re;
    this.source = source;
    this.caseless = caseless;
  }

  test(subject: string): boolean {
    return this.#re.test(Buffer.from(subject, 'utf8'));
  }

  exec(subject: string): RegexCaptures | null {
    return this.#re.exec(subject);
  }
}

/**
 * RE2's complaint (`text: fragment`) with the fragment as the pattern writes it: the binding hands RE2
 * `/` as `\/` and `(?<name>` as `(?P<name>`, so a fragment is mapped back when that finds it.
 */
function asWritten(reason: string, pattern: string): string {
  const colon = reason.indexOf(': ');
  if (colon === -1) return reason;
  const fragment = reason.slice(colon + 2);
  const slashes = fragment.replaceAll('\\/', '/');
  for (const candidate of [
    fragment,
    slashes,
    slashes.replaceAll('(?P<', '(?<'),
    fragment.replaceAll('(?P<', '(?<'),
  ])
    if (pattern.includes(candidate)) return `${reason.slice(0, colon)}: ${candidate}`;
  return reason;
}

/** `invalid regex "P": …`, saying why when the construct needs backtracking. */
function refusal(pattern: string, reason: string): string {
  const construct = BACKTRACKING.find((c) => c.test(reason, pattern));
  if (construct === undefined) return `invalid regex "${pattern}": ${reason}`;
  return `invalid regex "${pattern}": ${construct.what} cannot be run in bounded time (RE2: ${reason})`;
}

/** Names of `(?<name>…)` / `(?P<name>…)` captures: nginx makes each one a variable. */
export function namedCaptures(pattern: string): string[] {
  return [...pattern.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((match) => match[1]!);
}
