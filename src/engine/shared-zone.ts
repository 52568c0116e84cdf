/**
 * What a zone object in another thread needs to be the same zone (nginx's zone in shared memory): the
 * zone's state and its counters, both postMessage-able, and the counter slice that thread counts in.
 */
export interface SharedZoneMemory {
  readonly state: SharedArrayBuffer;
  readonly counters: SharedArrayBuffer;
  /** A `limit_req_zone … sync`'s cluster-wide state (limit-req/zone-sync.ts). */
  readonly sync?: SharedArrayBuffer;
}

export interface ZoneAttachment {
  readonly memory: SharedZoneMemory;
  /** The thread's counter slice (counter-slices.ts): 1.. for workers, 0 is the zone's first thread. */
  readonly slice: number;
}
