/**
 * ngx_http_geo_module: `geo [$address] $variable { default v; CIDR v; }`. Like map, the block's lines
 * are read by the geo handler itself; `delete CIDR;` takes a network written above out of the map again
 * (nginx's radix tree delete: the exact network, with a warning when there is none). `ranges` (first
 * in the block) makes it a table of `a.b.c.d-e.f.g.h v;` ranges (engine/net/geo-ranges.ts, with
 * nginx's splitting, warnings and overlap errors); `proxy CIDR;` and `proxy_recursive;` look a
 * request from those networks up by its `X-Forwarded-For`.
 */
import { parseComplexValue } from '../../engine/complex-value.ts';
import { cidrText, parseCidr } from '../../engine/net/address-text.ts';
import { GeoRanges } from '../../engine/net/geo-ranges.ts';
import { INADDR_NONE, parseIpv4 } from '../../engine/net/ip-text.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { GeoSpec } from '../model.ts';
import { complexValue, defineVariable, httpOf, ref, variableName } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

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
  let ranges: GeoRanges | null = null;
  const proxies: string[] = [];
  const networks = new Map<string, { cidr: string; value: string }>();
  for (const line of d.block ?? []) {
    if (line.block) throw configError('unexpected "{"', line);
    if (line.args.length === 0 && line.name === 'ranges') {
      if (defaultSeen || entries.length > 0 || networks.size > 0)
        throw configError('the "ranges" directive must be the first directive inside "geo" block', line);
      ranges = new GeoRanges();
      continue;
    }
    if (line.args.length === 0 && line.name === 'proxy_recursive') {
      spec.proxyRecursive = true;
      continue;
    }
    if (line.args.length !== 1) throw configError('invalid number of the geo parameters', line);
    if (line.name === 'proxy') {
      proxies.push(proxyNetwork(line.args[0]!, line, scope));
      continue;
    }
    if (ranges !== null) {
      if (line.name === 'default') {
        if (defaultSeen)
          scope.session.warn(
            `duplicate default geo range value: "${line.args[0]}", old value: "${spec.defaultValue}"`,
            ref(line),
          );
        defaultSeen = true;
        spec.defaultValue = line.args[0]!;
      } else geoRange(ranges, line, scope);
      continue;
    }
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
  if (ranges !== null) spec.ranges = ranges.pieces();
  if (proxies.length > 0) spec.proxies = proxies;
  scope.session.blockEnd(d);
}

/** `a.b.c.d-e.f.g.h value;` or `delete a.b.c.d-e.f.g.h;` in a `ranges` block (ngx_http_geo_range). */
function geoRange(ranges: GeoRanges, line: Directive, scope: Scope): void {
  const del = line.name === 'delete';
  const net = del ? line.args[0]! : line.name;
  const dash = net.indexOf('-');
  const start = dash === -1 ? -1 : parseIpv4(net, 0, dash);
  const end = dash === -1 ? -1 : parseIpv4(net, dash + 1);
  if (start < 0 || end < 0 || start === INADDR_NONE || end === INADDR_NONE || start > end)
    throw configError(`invalid range "${net}"`, line);
  if (del) {
    if (!ranges.delete(start, end)) scope.session.warn(`no address range "${net}" to delete`, ref(line));
    return;
  }
  const value = line.args[0]!;
  const added = ranges.add(start, end, value);
  if (added.kind === 'overlaps') throw configError(`range "${net}" overlaps "${added.range}"`, line);
  if (added.kind === 'duplicate')
    scope.session.warn(`duplicate range "${net}", value: "${value}", old value: "${added.old}"`, ref(line));
}

/** `proxy CIDR;` (ngx_http_geo_cidr_value): 255.255.255.255 alone, else a network. */
function proxyNetwork(net: string, line: Directive, scope: Scope): string {
  if (net === '255.255.255.255') return '255.255.255.255/32';
  const cidr = parseCidr(net);
  if (!cidr) throw configError(`invalid network "${net}"`, line);
  if (cidr.lowBits) scope.session.warn(`low address bits of ${net} are meaningless`, ref(line));
  return cidrText(cidr);
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
