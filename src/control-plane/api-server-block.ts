/**
 * What the control plane takes from the `api` location of `-c FILE`, as NGINX Plus would serve it: the
 * server's first `listen` (unless `--listen` is given), its `server_name`s (the names a write's `Host`
 * may be), its `allow`/`deny` rules (for every API read and write; probes, metrics and docs stay open
 * for the cluster's own checks), and `api write=off`.
 */
import type { AccessRule, Config, ListenSpec, LocationConf } from '../config/model.ts';

export interface ApiServerBlock {
  readonly listen: ListenSpec | null;
  /** The server's `server_name`s, as written (`""`, the default, names no host). */
  readonly serverNames: readonly string[];
  /** The `allow`/`deny` rules in force in the `api` location (inherited ones included). */
  readonly access: readonly AccessRule[];
  /** `api write=on`. */
  readonly write: boolean;
}

/** The first server with an `api` location, or null when the file has none. */
export function apiServerBlock(config: Config): ApiServerBlock | null {
  for (const server of config.http.servers) {
    const api = findApi(server.locations);
    if (api === null) continue;
    return {
      listen: server.listen[0] ?? null,
      serverNames: server.serverNames,
      access: api.access,
      write: api.api!.write,
    };
  }
  return null;
}

function findApi(locations: readonly LocationConf[]): LocationConf | null {
  for (const location of locations) {
    if (location.api !== null) return location;
    const nested = findApi(location.locations);
    if (nested !== null) return nested;
  }
  return null;
}
