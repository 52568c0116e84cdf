/**
 * ngx_http_map_module: `map source $variable { … }`. The block's lines are read by the map's own
 * handler (ngx_http_map), so they are checked here rather than through the directive table.
 */
import type { ComplexValue } from '../../engine/complex-value.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { hostnameHashKeys } from '../hostname-keys.ts';
import type { MapEntrySpec, MapSpec } from '../model.ts';
import { compileRegex, namedCaptures } from '../regex.ts';
import { complexValue, defineVariable, httpOf, ref, variableName } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

type MutableMap = { -readonly [K in keyof MapSpec]: MapSpec[K] };

function map(d: Directive, scope: Scope): void {
  const source = complexValue(d.args[0]!, d, scope);
  const variable = variableName(d.args[1]!, d);
  const entries: MapEntrySpec[] = [];
  const spec: MutableMap = {
    source,
    variable,
    hostnames: false,
    volatile: false,
    defaultValue: null,
    entries,
    sourceRef: ref(d),
  };
  defineVariable(variable, spec, d, scope);
  httpOf(scope).maps.push(spec);

  const hashKeys = new Set<string>();
  for (const line of d.block ?? []) {
    if (line.block) throw configError('unexpected "{"', line);
    const words = [line.name, ...line.args];
    if (words.length === 1 && line.name === 'hostnames') {
      spec.hostnames = true;
      continue;
    }
    if (words.length === 1 && line.name === 'volatile') {
      spec.volatile = true;
      continue;
    }
    if (words.length !== 2) throw configError('invalid number of the map parameters', line);
    const key = words[0]!;
    const value = complexValue(words[1]!, line, scope);
    if (key === 'default') {
      if (spec.defaultValue) throw configError('duplicate default map parameter', line);
      spec.defaultValue = value;
      continue;
    }
    if (key.startsWith('~')) {
      entries.push(regexEntry(key, value, line, scope));
      continue;
    }
    // `\default`, `\hostnames`, `\~x`: a leading backslash makes a special word an exact key
    const match = key.startsWith('\\') ? key.slice(1) : key;
    const keys = spec.hostnames ? hostnameHashKeys(match) : [`exact:${match.toLowerCase()}`];
    if (!keys) throw configError(`invalid hostname or wildcard "${match}"`, line);
    if (keys.some((k) => hashKeys.has(k)))
      throw configError(`conflicting parameter "${match.toLowerCase()}"`, line);
    for (const k of keys) hashKeys.add(k);
    entries.push({ kind: 'exact', match: match.toLowerCase(), value });
  }
  scope.session.blockEnd(d);
}

function regexEntry(key: string, value: ComplexValue, line: Directive, scope: Scope): MapEntrySpec {
  const caseless = key[1] === '*';
  const pattern = key.slice(caseless ? 2 : 1);
  const regex = compileRegex(pattern, caseless, line);
  for (const name of namedCaptures(pattern))
    if (!httpOf(scope).variables.has(name)) defineVariable(name, {}, line, scope);
  return { kind: 'regex', pattern, caseless, regex, value };
}

export const mapDirectives: readonly DirectiveSpec[] = [
  { name: 'map', contexts: ['http'], block: true, args: [2], handle: map },
];
