/**
 * The captures of a `server_name ~regex`: ngx_http_find_virtual_server matches the request's host
 * with ngx_http_regex_exec, which makes each named capture (`(?<name>…)`, `(?P<name>…)`) a variable
 * of the request and its groups the request's `$1`…. Their slots are declared before any value reads
 * them, as nginx makes the variables when it compiles the regex.
 */
import type { NginxRegex } from '../engine/nginx-regex.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import type { ServerConf } from './model.ts';
import { namedCaptures } from './regex.ts';

/** Each server's regex names (`~…`) in order, the same order as its `serverNameRegexes`. */
function regexNames(server: ServerConf): string[] {
  return server.serverNames.filter((name) => name.startsWith('~')).map((name) => name.slice(1));
}

/** Declares every named capture of every `server_name` regex. */
export function declareServerNameCaptures(servers: readonly ServerConf[], variables: VariableTable): void {
  for (const server of servers)
    for (const pattern of regexNames(server))
      for (const name of namedCaptures(pattern)) variables.declare(name);
}

/** A server's regexes, each with the slots of its named captures. */
export function serverNameSlots(
  server: ServerConf,
  variables: VariableTable,
): ReadonlyMap<NginxRegex, ReadonlyMap<string, number>> {
  const patterns = regexNames(server);
  const slots = new Map<NginxRegex, ReadonlyMap<string, number>>();
  server.serverNameRegexes.forEach((regex, i) => {
    const names = new Map<string, number>();
    for (const name of namedCaptures(patterns[i] ?? '')) names.set(name, variables.declare(name));
    slots.set(regex, names);
  });
  return slots;
}
