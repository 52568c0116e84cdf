/**
 * Regular expressions in `location ~`, `server_name ~` and `map` are PCRE in nginx; limitswitch runs
 * them as JavaScript RegExps, so the configuration is checked by compiling them exactly as the engine
 * will (compileNginxRegex translates the PCRE-only spellings `(?P<name>` and a leading `(?i)`).
 */
import { compileNginxRegex } from '../engine/http/hostname-matcher.ts';

/** Compiles the pattern; returns the error text when it is invalid, else `null`. */
export function regexError(pattern: string, caseless: boolean): string | null {
  try {
    compileNginxRegex(pattern, caseless);
    return null;
  } catch (err) {
    const reason =
      err instanceof Error ? err.message.replace(/^Invalid regular expression: \/.*\/\w*: /s, '') : '';
    return `invalid regex "${pattern}": ${reason}`;
  }
}

/** Names of `(?<name>…)` / `(?P<name>…)` captures: nginx makes each one a variable. */
export function namedCaptures(pattern: string): string[] {
  return [...pattern.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((match) => match[1]!);
}
