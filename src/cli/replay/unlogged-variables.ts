/**
 * The request fields a configuration's limits read that an access log does not carry. A replay sees
 * them empty — for a `limit_req_zone` key that means "not accounted" — so the report names them.
 */

import type { HttpConf } from '../../config/model.ts';
import type { ComplexValue } from '../../engine/complex-value.ts';
import { variablesOf } from '../../engine/complex-value.ts';
import type { AccessLogParser } from './access-log-parser.ts';

/** `$http_*` fields the format lacks and every `$cookie_*` (never read from a log), sorted. */
export function unloggedVariables(http: HttpConf, parser: AccessLogParser): string[] {
  const values: ComplexValue[] = [
    ...http.limitReqZones.map((z) => z.key),
    ...http.limitConnZones.map((z) => z.key),
    ...http.keyvals.map((k) => k.key),
    ...http.geos.map((g) => g.address),
  ];
  for (const map of http.maps) {
    values.push(map.source);
    if (map.defaultValue !== null) values.push(map.defaultValue);
    for (const entry of map.entries) values.push(entry.value);
  }
  const hasHost = parser.has.has('host') || parser.has.has('server_name') || parser.headerNames.has('host');
  const unlogged = new Set<string>();
  for (const name of values.flatMap(variablesOf)) {
    if (name.startsWith('cookie_')) unlogged.add(name);
    if (!name.startsWith('http_')) continue;
    const header = name.slice(5).replace(/_/g, '-');
    if (header === 'host' ? !hasHost : !parser.headerNames.has(header)) unlogged.add(name);
  }
  return [...unlogged].sort().map((name) => `$${name}`);
}
