/**
 * The control plane's own Prometheus metrics, in a registry per app (so several apps in one process,
 * as in tests, do not collide). Cluster-wide limit_req counters are not here: they are served in NGINX
 * Plus form at `/api/N/http/limit_reqs/` for nginx-prometheus-exporter.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface ControlPlaneMetricsOptions {
  /** Also export the Node process metrics (`limitswitch_control_plane_process_*`). Default false. */
  readonly processMetrics?: boolean;
}

export class ControlPlaneMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'route' | 'method' | 'code'>;
  readonly #mutations: Counter<'zone' | 'op'>;
  readonly #storeSeconds: Histogram<'op' | 'outcome'>;
  #countLive: (() => Promise<number>) | null = null;

  constructor(options: ControlPlaneMetricsOptions = {}) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'limitswitch_api_requests_total',
      help: 'API requests answered, by route (operationId), method and HTTP status code',
      labelNames: ['route', 'method', 'code'],
      registers,
    });
    this.#mutations = new Counter({
      name: 'limitswitch_keyval_mutations_total',
      help: 'Successful keyval and limit_req mutations, by zone and operation',
      labelNames: ['zone', 'op'],
      registers,
    });
    this.#storeSeconds = new Histogram({
      name: 'limitswitch_store_request_duration_seconds',
      help: 'Latency of store calls made by the control plane, by operation and outcome',
      labelNames: ['op', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'limitswitch_replicas_live',
      help: 'Replicas whose heartbeat has not expired, as the store reports them at scrape time',
      registers,
      async collect() {
        // A store that does not answer leaves the last value in place rather than failing the scrape.
        if (!metrics.#countLive) return;
        try {
          this.set(await metrics.#countLive());
        } catch {
          // Reported by limitswitch_store_request_duration_seconds{outcome="error"}.
        }
      },
    });
    if (options.processMetrics) {
      collectDefaultMetrics({ register: this.registry, prefix: 'limitswitch_control_plane_' });
    }
  }

  /** Where the live-replica gauge reads from at scrape time. */
  countLiveReplicasWith(fn: () => Promise<number>): void {
    this.#countLive = fn;
  }

  observeRequest(route: string, method: string, code: number): void {
    this.#requests.inc({ route, method, code: String(code) });
  }

  countMutation(zone: string, op: string): void {
    this.#mutations.inc({ zone, op });
  }

  observeStore(op: string, seconds: number, ok: boolean): void {
    this.#storeSeconds.observe({ op, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
