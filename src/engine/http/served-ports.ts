/**
 * The ports a replica serves itself: every `listen` port except those whose servers hold nothing but
 * `api` locations (the NGINX Plus API is the control plane's, and read-only on `--status-listen`).
 */
import type { Site } from './site.ts';
import type { SiteLocation } from './site-server.ts';

export function servedPorts(site: Site): number[] {
  return site
    .ports()
    .filter((port) =>
      site.servers.some((s) => s.listen.some((l) => l.port === port) && !isApiOnly(s.locations)),
    );
}

/**
 * Where a request that names no port goes (`limitswitch simulate`): the port a plain
 * `curl http://127.0.0.1/` reaches, 80, when a server proxies it; else the first port a replica serves.
 */
export function defaultRequestPort(site: Site): number {
  const served = servedPorts(site);
  return served.includes(80) ? 80 : (served[0] ?? site.ports()[0] ?? 80);
}

function isApiOnly(locations: readonly SiteLocation[]): boolean {
  return (
    locations.length !== 0 && locations.every((l) => l.handler.api !== null && isApiOnlyNested(l.locations))
  );
}

function isApiOnlyNested(locations: readonly SiteLocation[]): boolean {
  return locations.length === 0 || isApiOnly(locations);
}
