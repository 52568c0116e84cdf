/**
 * The addresses a port is bound on, as nginx binds them without `bind`: each `listen` address on the
 * port, but none beside a wildcard of its family — `0.0.0.0` takes every IPv4 address, `[::]` every
 * IPv6 one — and the connection's local address then finds its server.
 */
import type { Site } from '../../engine/http/site.ts';

const WILDCARD_V4 = '0.0.0.0';
const WILDCARD_V6 = '::';

export function bindAddresses(site: Site, configuredPort: number): string[] {
  const hosts: string[] = [];
  for (const server of site.servers)
    for (const listen of server.listen) {
      if (listen.port !== configuredPort) continue;
      const host = listen.host === null || listen.host === '*' ? WILDCARD_V4 : listen.host;
      if (!hosts.includes(host)) hosts.push(host);
    }
  const anyV4 = hosts.includes(WILDCARD_V4);
  const anyV6 = hosts.includes(WILDCARD_V6);
  return hosts.filter((host) => {
    const v6 = host.includes(':');
    if (v6) return !anyV6 || host === WILDCARD_V6;
    return !anyV4 || host === WILDCARD_V4;
  });
}
