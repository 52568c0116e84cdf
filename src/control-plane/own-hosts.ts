/**
 * The API's own names: what the `Host` of a write may be. A page of another site whose name resolves
 * to this address (DNS rebinding) sends its own name, which is none of these:
 * - any IP literal (IPv4, IPv6 in brackets), with or without a port: no name is resolved to reach it;
 * - `localhost`;
 * - the names the operator gives (`--server-name`, the `api` server's `server_name` of `-c FILE`),
 *   matched as nginx matches `server_name`: exact, `*.example.com`, `.example.com` (the name and its
 *   subdomains), `www.example.*`. The port is not compared (a port-forward changes it).
 * `~regex` names are not taken: the `Host` is the client's to choose, and a backtracking pattern run
 * on it would let the client choose what it costs.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { HostnameMatcher } from '../engine/hostname-matcher.ts';
import { normalizeHost } from '../engine/http/find-server.ts';

export class OwnHosts {
  readonly #names = new HostnameMatcher<true>();

  /**
   * `names` as nginx's `server_name` takes them; `""` (nginx: a request without a host) and `~regex`
   * names are left out.
   */
  constructor(names: readonly string[] = []) {
    for (const name of names) if (name !== '' && !name.startsWith('~')) this.#names.add(name, true);
  }

  /** The `~regex` names of `names`, which no `Host` is matched against. */
  static regexNames(names: readonly string[]): string[] {
    return names.filter((name) => name.startsWith('~'));
  }

  /** Why `name` cannot be a `--server-name`, or null when it can. */
  static invalid(name: string): string | null {
    if (name.startsWith('~'))
      return `regular expressions are not taken ("${name}"): name the hosts, or use a wildcard (*.example.com)`;
    // One wildcard at most, at either end, as nginx takes them.
    const plain = name.replace(/^\*\.|^\.|\.\*$/, '');
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(plain))
      return `invalid server name or wildcard "${name}" (a name without a port: api.example.com, *.example.com, .example.com, www.example.*)`;
    return null;
  }

  /** The name of a `Host` header as nginx reads it (lower case, no port, no trailing dot). */
  static nameOf(host: string | undefined): string {
    return normalizeHost(host);
  }

  /** The `Host` header names this API. */
  allows(host: string | undefined): boolean {
    const name = normalizeHost(host);
    if (name === '') return false;
    if (name === 'localhost' || isIPv4(name)) return true;
    if (name.startsWith('[')) return name.endsWith(']') && isIPv6(name.slice(1, -1));
    return this.#names.match(name) !== undefined;
  }
}
