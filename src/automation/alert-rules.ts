/**
 * The alert rules file (`limitswitch control-plane --alert-rules FILE`): YAML, checked against
 * `api-spec/alert-rules.schema.json` with ajv, then compiled (matchers, templates, durations) once at
 * start-up. Every error names the file, the line and the path of the bad field, like `nginx -t` does:
 * `rules.yaml:7: rules[0].ttl: invalid duration "5x"`.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { type Document, LineCounter, parseDocument } from 'yaml';
import { LimitswitchError } from '../shared/errors.ts';
import { parseDurationMs } from './duration.ts';
import type { OnResolve } from './key-state.ts';
import { type LabelMatcher, parseLabelMatcher } from './label-matcher.ts';
import { type LabelTemplate, parseLabelTemplate } from './label-template.ts';

export type { OnResolve };

/** One compiled rule. */
export interface AlertRule {
  readonly name: string;
  readonly matchers: readonly LabelMatcher[];
  readonly zone: string;
  readonly key: LabelTemplate;
  readonly value: LabelTemplate;
  readonly onResolve: OnResolve;
  readonly ttlMs: number;
  readonly minHoldMs: number;
  readonly dryRun: boolean;
}

/** The whole file, compiled. */
export interface AlertRules {
  /** Where it came from, for logs. */
  readonly source: string;
  readonly rules: readonly AlertRule[];
  readonly maxBodyBytes: number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

interface RawRule {
  name: string;
  matchers: string[];
  zone: string;
  key: string;
  value: string | number;
  on_resolve?: OnResolve;
  ttl: string;
  min_hold?: string;
  dry_run?: boolean;
}

interface RawFile {
  max_body_bytes?: number;
  rules: RawRule[];
}

const SCHEMA_FILE = new URL('../../api-spec/alert-rules.schema.json', import.meta.url);

let validator: ReturnType<Ajv['compile']> | null = null;

function validate(data: unknown): readonly ErrorObject[] {
  if (!validator) {
    const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);
  }
  return validator(data) ? [] : (validator.errors ?? []);
}

/** What the rules are checked against besides themselves. */
export interface AlertRulesContext {
  /** The keyval zones of `-c FILE`: a rule naming another zone is an error. Absent: not checked. */
  readonly keyvalZones?: readonly string[];
}

/** Read and compile `file`; throws `RL_ERR_ALERT_RULES_INVALID` with every problem found. */
export function loadAlertRules(file: string, context: AlertRulesContext = {}): AlertRules {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LimitswitchError('RL_ERR_ALERT_RULES_INVALID', `${file}: ${(err as Error).message}`);
  }
  return parseAlertRules(text, file, context);
}

/**
 * Compile a rules text; `file` only names it in errors. Every problem is reported in one pass, in line
 * order: the schema's, and the checks of each field the schema let through (durations, matchers,
 * templates, duplicate names, zones).
 */
export function parseAlertRules(text: string, file: string, context: AlertRulesContext = {}): AlertRules {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new LimitswitchError(
      'RL_ERR_ALERT_RULES_INVALID',
      doc.errors.map((e) => `${file}:${e.linePos?.[0].line ?? 1}: ${yamlMessage(e.message)}`).join('\n'),
    );
  }
  const data = doc.toJS() as unknown;
  const problems: { line: number; text: string }[] = [];
  const report = (path: readonly (string | number)[], text: string) => {
    const line = lineOf(doc, lines, path);
    problems.push({ line, text: `${file}:${line}: ${showPath(path)}: ${text}` });
  };
  // Fields the schema refused are not checked again (one message per bad field).
  const refused = new Set<string>();
  for (const error of validate(data)) {
    const { path, text } = schemaProblem(error);
    refused.add(showPath(path.slice(0, 3)));
    if (error.keyword === 'required') refused.add(showPath([...path, String(error.params.missingProperty)]));
    report(path, text);
  }

  const raw = (isObject(data) ? data : {}) as Partial<RawFile>;
  const rules: AlertRule[] = [];
  const names = new Set<string>();
  const zones = context.keyvalZones ? new Set(context.keyvalZones) : null;
  for (const [index, rule] of (Array.isArray(raw.rules) ? raw.rules : []).entries()) {
    if (!isObject(rule)) continue;
    const checked = (field: string) => !refused.has(showPath(['rules', index, field]));
    const attempt = <T>(field: string, fn: () => T, extra: (string | number)[] = []): T | null => {
      if (!checked(field)) return null;
      try {
        return fn();
      } catch (err) {
        report(['rules', index, field, ...extra], (err as Error).message);
        return null;
      }
    };
    if (typeof rule.name === 'string' && checked('name')) {
      if (names.has(rule.name)) report(['rules', index, 'name'], `duplicate rule name "${rule.name}"`);
      names.add(rule.name);
    }
    if (typeof rule.zone === 'string' && zones !== null && checked('zone') && !zones.has(rule.zone)) {
      report(['rules', index, 'zone'], `unknown keyval zone "${rule.zone}" (not a keyval_zone of -c FILE)`);
    }
    const matchers = (Array.isArray(rule.matchers) ? rule.matchers : []).map((m, i) =>
      attempt('matchers', () => parseLabelMatcher(m), [i]),
    );
    const key = attempt('key', () => parseLabelTemplate(rule.key));
    const value = attempt('value', () => parseLabelTemplate(String(rule.value)));
    const ttlMs = attempt('ttl', () => duration(rule.ttl));
    const minHoldMs = attempt('min_hold', () => duration(rule.min_hold ?? '0'));
    if (ttlMs === 0) report(['rules', index, 'ttl'], 'must be longer than 0s');
    if (ttlMs !== null && minHoldMs !== null && minHoldMs > ttlMs) {
      report(['rules', index, 'min_hold'], `must not be longer than ttl (${rule.ttl})`);
    }
    if (matchers.includes(null) || !key || !value || ttlMs === null || minHoldMs === null) continue;
    rules.push({
      name: rule.name,
      matchers: matchers as LabelMatcher[],
      zone: rule.zone,
      key,
      value,
      onResolve: rule.on_resolve ?? 'delete',
      ttlMs,
      minHoldMs,
      dryRun: rule.dry_run ?? false,
    });
  }
  if (problems.length > 0) {
    // Stable: problems on one line keep the order they were found in.
    problems.sort((a, b) => a.line - b.line);
    throw new LimitswitchError('RL_ERR_ALERT_RULES_INVALID', problems.map((p) => p.text).join('\n'));
  }
  return { source: file, rules, maxBodyBytes: raw.max_body_bytes ?? DEFAULT_MAX_BODY_BYTES };
}

function isObject(value: unknown): value is Record<string, never> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function duration(text: string): number {
  const ms = parseDurationMs(text);
  if (ms === null)
    throw new LimitswitchError(
      'RL_ERR_ALERT_RULES_INVALID',
      `invalid duration "${text}" (units: y w d h m s ms, largest first)`,
    );
  return ms;
}

/** An ajv error as the path of the bad field and what is wrong with it. */
function schemaProblem(error: ErrorObject): { path: (string | number)[]; text: string } {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^[0-9]+$/.test(p) ? Number(p) : p));
  switch (error.keyword) {
    case 'additionalProperties':
      return { path: [...path, String(error.params.additionalProperty)], text: 'unknown field' };
    case 'required':
      return { path, text: `missing field "${String(error.params.missingProperty)}"` };
    case 'type': {
      const types = [error.params.type as string | string[]].flat();
      return {
        path,
        text: `must be ${types.map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)).join(' or ')}`,
      };
    }
    case 'enum':
      return { path, text: `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}` };
    case 'pattern':
      return { path, text: `invalid value (expected ${patternHint(path)})` };
    default:
      return { path, text: error.message ?? 'invalid' };
  }
}

/** The yaml package's first line, without its own position (the caller prints `file:line`). */
function yamlMessage(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

function patternHint(path: readonly (string | number)[]): string {
  const field = path[path.length - 1];
  return field === 'name'
    ? 'letters, digits, "_", "." or "-", at most 64'
    : 'a duration such as 30s, 5m, 1h30m';
}

/** `rules[0].ttl`; the root is `(file)`. */
function showPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(file)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The line of the deepest node on `path` that exists (1 when the document is empty). */
function lineOf(doc: Document, lines: LineCounter, path: readonly (string | number)[]): number {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = doc.getIn(path.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}
