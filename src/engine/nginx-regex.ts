/**
 * A regular expression of the configuration (`location ~`, `server_name ~`, a `map` regex, `if ($v ~ re)`)
 * as the engine runs it. The engine never compiles a user's pattern: the config layer does, once, where
 * the pattern is written (as nginx compiles at the directive), on an engine whose time is linear in the
 * subject whatever the pattern says, and hands over this interface. Subjects are the engine's strings:
 * one character per byte of the request.
 */

/** The captures of one match: `[0]` the whole match, `[n]` nginx's `$n`. */
export interface RegexCaptures {
  readonly length: number;
  /** `undefined` for a group that took no part in the match (nginx's `$n` is then empty). */
  readonly [index: number]: string | undefined;
  /** Named captures (`(?<name>…)`, `(?P<name>…)`), by name. */
  readonly groups?: { readonly [name: string]: string | undefined } | undefined;
}

export interface NginxRegex {
  /** Whether the pattern matches anywhere in `subject` (no captures kept). */
  test(subject: string): boolean;
  /** The captures of the leftmost match in `subject`, or null when there is none. */
  exec(subject: string): RegexCaptures | null;
}
