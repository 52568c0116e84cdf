/**
 * Label matchers in Alertmanager's own syntax (`matchers:` of its routes and inhibit rules), so a rule
 * reads like the route that delivers the alert: `alertname="CoffeeOverloaded"`, `path=~"/coffee.*"`,
 * `severity!="info"`, `env!~"dev|test"`. Values may be double-quoted (with `\"`, `\\`, `\n` escapes)
 * or bare. Regular expressions are anchored at both ends, as in Prometheus and Alertmanager.
 */
import { LimitswitchError } from '../shared/errors.ts';

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface LabelMatcher {
  readonly name: string;
  readonly op: MatchOp;
  readonly value: string;
  /** The matcher as written, for messages. */
  readonly text: string;
  matches(labels: Readonly<Record<string, string>>): boolean;
}

const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/** Parse one matcher; throws an `Error` whose message names what is wrong. */
export function parseLabelMatcher(text: string): LabelMatcher {
  const match = MATCHER.exec(text);
  if (!match)
    throw new LimitswitchError(
      'RL_ERR_ALERT_RULES_INVALID',
      `invalid matcher "${text}": expected name, one of = != =~ !~, and a value`,
    );
  const name = match[1]!;
  const op = match[2] as MatchOp;
  const value = unquote(match[3]!, text);
  let test: (labelValue: string) => boolean;
  if (op === '=~' || op === '!~') {
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${value})$`, 'su');
    } catch (err) {
      throw new LimitswitchError(
        'RL_ERR_ALERT_RULES_INVALID',
        `invalid matcher "${text}": ${(err as Error).message}`,
      );
    }
    test = op === '=~' ? (v) => re.test(v) : (v) => !re.test(v);
  } else {
    test = op === '=' ? (v) => v === value : (v) => v !== value;
  }
  return {
    name,
    op,
    value,
    text,
    // A missing label matches as the empty string, as in Alertmanager.
    matches: (labels) => test(Object.hasOwn(labels, name) ? labels[name]! : ''),
  };
}

/** True when every matcher matches (an empty list matches nothing: a rule must say what it wants). */
export function matchesAll(
  matchers: readonly LabelMatcher[],
  labels: Readonly<Record<string, string>>,
): boolean {
  return matchers.length > 0 && matchers.every((m) => m.matches(labels));
}

function unquote(raw: string, text: string): string {
  if (!raw.startsWith('"')) {
    if (/["\s]/.test(raw) && raw !== '') {
      throw new LimitswitchError(
        'RL_ERR_ALERT_RULES_INVALID',
        `invalid matcher "${text}": quote values that contain spaces or quotes`,
      );
    }
    return raw;
  }
  if (raw.length < 2 || !raw.endsWith('"'))
    throw new LimitswitchError('RL_ERR_ALERT_RULES_INVALID', `invalid matcher "${text}": unterminated quote`);
  let out = '';
  const body = raw.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '"')
      throw new LimitswitchError(
        'RL_ERR_ALERT_RULES_INVALID',
        `invalid matcher "${text}": unescaped quote in value`,
      );
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = body[++i];
    if (next === 'n') out += '\n';
    else if (next === '"' || next === '\\') out += next;
    else
      throw new LimitswitchError(
        'RL_ERR_ALERT_RULES_INVALID',
        `invalid matcher "${text}": unknown escape "\\${next ?? ''}"`,
      );
  }
  return out;
}
