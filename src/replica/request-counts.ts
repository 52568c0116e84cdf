/**
 * Requests routed per server name and location name, limited ones included (the metric
 * `limitswitch_location_requests_total`, which alert rules watch). Counts only grow.
 */
export class RequestCounts {
  readonly #byServer = new Map<string, Map<string, number>>();

  count(server: string, location: string): void {
    let locations = this.#byServer.get(server);
    if (locations === undefined) {
      locations = new Map();
      this.#byServer.set(server, locations);
    }
    locations.set(location, (locations.get(location) ?? 0) + 1);
  }

  *entries(): Generator<{ server: string; location: string; count: number }> {
    for (const [server, locations] of this.#byServer) {
      for (const [location, count] of locations) yield { server, location, count };
    }
  }
}
