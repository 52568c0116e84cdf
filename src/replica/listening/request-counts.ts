/**
 * Requests routed per server name and location name, limited ones included (the metric
 * `limitswitch_location_requests_total`, which alert rules watch). Counts only grow.
 */
export interface RoutedCount {
  readonly server: string;
  readonly location: string;
  readonly count: number;
}

export class RequestCounts {
  readonly #byServer = new Map<string, Map<string, number>>();

  get size(): number {
    return this.#byServer.size;
  }

  count(server: string, location: string, requests = 1): void {
    let locations = this.#byServer.get(server);
    if (locations === undefined) {
      locations = new Map();
      this.#byServer.set(server, locations);
    }
    locations.set(location, (locations.get(location) ?? 0) + requests);
  }

  *entries(): Generator<RoutedCount> {
    for (const [server, locations] of this.#byServer) {
      for (const [location, count] of locations) yield { server, location, count };
    }
  }
}
