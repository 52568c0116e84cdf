/**
 * The shared memory of a site's zones, so that the sites worker threads build from the same
 * configuration enforce one set of zones, as nginx's workers do: each limit_req and limit_conn zone's
 * state and counters, each keyval zone's publication. The thread that follows the store owns the
 * zones and shares them (postMessage-able); a worker's site attaches to them, counting in its own
 * slice (config/build-site.ts). Sharing again after a reload hands out the same memory for every zone
 * the reload kept.
 */
import type { KeyvalPublicationMemory } from '../keyval/keyval-publication.ts';
import type { SharedZoneMemory } from '../shared-zone.ts';
import type { Site } from './site.ts';

export interface SiteMemory {
  readonly limitReq: ReadonlyMap<string, SharedZoneMemory>;
  readonly limitConn: ReadonlyMap<string, SharedZoneMemory>;
  readonly keyval: ReadonlyMap<string, KeyvalPublicationMemory>;
}

/** What a worker's site is built on: the owner's zones, and the counter slice the worker counts in. */
export interface SiteAttachment {
  readonly memory: SiteMemory;
  readonly slice: number;
}

export function shareSite(site: Site): SiteMemory {
  const share = <Z extends { share(): M }, M>(zones: ReadonlyMap<string, Z>) =>
    new Map([...zones].map(([name, zone]) => [name, zone.share()]));
  return {
    limitReq: share(site.limitReqZones),
    limitConn: share(site.limitConnZones),
    keyval: share(site.keyvalZones),
  };
}
