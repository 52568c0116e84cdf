/**
 * The addresses a replica serves itself: every `listen` TCP port and UNIX-domain socket except those
 * whose servers hold nothing but `api` locations (the NGINX Plus API is the control plane's, and
 * read-only on `--status-listen`).
 */
import { isUnixAddress } from '../net/address-text.ts';
import type { Site } from './site.ts';
import type { SiteLocation, SiteServer } from './site-server.ts';

/**
 * What one listener serves: a TCP port (on the addresses its `listen`s name), or a UNIX-domain socket
 * (`unix:/path`, held with port 0 in the listen definitions, as nginx's AF_UNIX address has none).
 */
export type ServedAddress =
  | { readonly port: number; readonly unix: null }
  | { readonly port: 0; readonly unix: string };

/** A listener's key and name: the port's number, or the socket's `unix:/path`. */
export function servedAddressKey(address: ServedAddress): string {
  return address.unix ?? String(address.port);
}

/** Whether a server listens on the address. */
export function listensOn(server: Pick<SiteServer, 'listen'>, address: ServedAddress): boolean {
  return server.listen.some((l) =>
    address.unix === null ? l.port === address.port && !isUnixAddress(l.host) : l.host === address.unix,
  );
}

/** TCP ports first, then UNIX-domain sockets, each in order of appearance. */
export function servedAddresses(site: Site): ServedAddress[] {
  const all: ServedAddress[] = [
    ...site.ports().map((port) => ({ port, unix: null })),
    ...unixAddresses(site).map((unix) => ({ port: 0 as const, unix })),
  ];
  return all.filter((address) => site.servers.some((s) => listensOn(s, address) && !isApiOnly(s.locations)));
}

/**
 * Where a request that names no port goes (`limitswitch simulate`): the port a plain
 * `curl http://127.0.0.1/` reaches, 80, when a server proxies it; else the first port a replica serves.
 */
export function defaultRequestPort(site: Site): number {
  const served = servedAddresses(site).flatMap((a) => (a.unix === null ? [a.port] : []));
  return served.includes(80) ? 80 : (served[0] ?? site.ports()[0] ?? 80);
}

function unixAddresses(site: Site): string[] {
  const all = site.servers.flatMap((s) => s.listen.flatMap((l) => (isUnixAddress(l.host) ? [l.host!] : [])));
  return [...new Set(all)];
}

function isApiOnly(locations: readonly SiteLocation[]): boolean {
  return (
    locations.length !== 0 && locations.every((l) => l.handler.api !== null && isApiOnlyNested(l.locations))
  );
}

function isApiOnlyNested(locations: readonly SiteLocation[]): boolean {
  return locations.length === 0 || isApiOnly(locations);
}
