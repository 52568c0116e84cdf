/**
 * ngx_http_geo_module: `geo [$address] $variable { default v; CIDR v; }`. Like map, the block's lines
 * are read by the geo handler itself; `delete CIDR;` takes a network written above out of the map again
 * (nginx's radix tree delete: the exact network, with a warning when there is none). `ranges`,
 * `proxy` and `proxy_recursive` are not supported.
 */
import { parseComplexValue } from '../../engine/complex-value.ts';
import { cidrText, parseCidr } from '../../engine/net/address-text.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { GeoSpec } from '../model.ts';
import { complexValue, defineVariable, httpOf, ref, variableName } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const UNSUPPORTED = new Set(['ranges', 'proxy_recursive', 'proxy']);

function geo(d: Directive, scope: Scope): void {
  variableName(d.args[0]!, d);
  const withAddress = d.args.length === 2;
  const address = withAddress ? complexValue(d.args[0]!, d, scope) : parseComplexValue('$remote_addr');
  const variable = variableName(d.args[withAddress ? 1 : 0]!, d);
  const entries: { cidr: string; value: string }[] = [];
  const spec: { -readonly [K in keyof GeoSpec]: GeoSpec[K] } = {
    address,
    variable,
    defaultValue: '',
    entries,
    sourceRef: ref(d),
  };
  defineVariable(variable, spec, d, scope);
  httpOf(scope).geos.push(spec);

  let defaultSeen = false;
  const networks = new Map<string, { cidr: string; value: string }>();
  for (const line of d.block ?? []) {
    if (line.block) throw configError('unexpected "{"', line);
    if (UNSUPPORTED.has(line.name))
      throw configError(`the "${line.name}" parameter of "geo" is not supported by limitswitch`, line);
    if (line.args.length !== 1) throw configError('invalid number of the geo parameters', line);
    if (line.name === 'delete') {
      deleteNetwork(line.args[0]!, networks, entries, line, scope);
      continue;
    }
    const [net, value] = [line.name, line.args[0]!];
    if (net === 'default') {
      if (defaultSeen) duplicateNetwork(net, value, spec.defaultValue, line, scope);
      defaultSeen = true;
      spec.defaultValue = value;
      continue;
    }
    const cidr = parseCidr(net);
    if (!cidr) throw configError(`invalid network "${net}"`, line);
    if (cidr.lowBits) scope.session.warn(`low address bits of ${net} are meaningless`, ref(line));
    const network = cidrText(cidr);
    const existing = networks.get(network);
    if (existing) {
      duplicateNetwork(net, value, existing.value, line, scope);
      existing.value = value;
      continue;
    }
    const entry = { cidr: net, value };
    networks.set(network, entry);
    entries.push(entry);
  }
  scope.session.blockEnd(d);
}

/** `delete CIDR;` (ngx_http_geo_cidr with `delete`): the network as written, if the map has it. */
function deleteNetwork(
  net: string,
  networks: Map<string, { cidr: string; value: string }>,
  entries: { cidr: string; value: string }[],
  line: Directive,
  scope: Scope,
): void {
  const cidr = parseCidr(net);
  if (!cidr) throw configError(`invalid network "${net}"`, line);
  if (cidr.lowBits) scope.session.warn(`low address bits of ${net} are meaningless`, ref(line));
  const network = cidrText(cidr);
  const existing = networks.get(network);
  if (!existing) {
    scope.session.warn(`no network "${net}" to delete`, ref(line));
    return;
  }
  networks.delete(network);
  entries.splice(entries.indexOf(existing), 1);
}

function duplicateNetwork(net: string, value: string, old: string, line: Directive, scope: Scope): void {
  scope.session.warn(`duplicate network "${net}", value: "${value}", old value: "${old}"`, ref(line));
}

export const geoDirectives: readonly DirectiveSpec[] = [
  { name: 'geo', contexts: ['http'], block: true, args: [1, 2], handle: geo },
];
