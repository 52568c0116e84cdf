/**
 * Everything the alert loop runs on, as separate processes: the cafe cluster (real Redis, the tea and
 * coffee upstreams, a control plane with `--alert-rules` and a token for Alertmanager, N replicas with
 * status listeners), a real Prometheus scraping every replica and evaluating the `/coffee` load alert,
 * and a real Alertmanager posting to the control plane's webhook with the bearer token. Intervals are
 * 1 s everywhere; ports are chosen first so all of it starts at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CafeCluster, startCafeCluster } from '../e2e/cafe-cluster.ts';
import { freePort } from '../helpers/free-port.ts';
import { type MonitoringProcess, startAlertmanager, startPrometheus } from '../helpers/prometheus-stack.ts';

export const ALERT = 'CoffeeOverloaded';
export const RULE = 'coffee-overloaded';
export const TOKEN_ID = 'alertmanager';
const TOKEN = 'alertmanager-e2e-token-0123456789';
/** Requests per second on `/coffee`, summed over the replicas, above which the alert fires. */
export const THRESHOLD_PER_S = 60;
/** The metric window: 5 scrapes, so one late scrape never leaves `rate` without two samples. */
export const WINDOW_MS = 5_000;
const WINDOW = `${WINDOW_MS / 1000}s`;

/** The control plane's rules: the alert's `path` label is the limitreq_uri key. */
const CONTROL_PLANE_RULES = `rules:
  - name: ${RULE}
    matchers: ['alertname="${ALERT}"', 'path=~"/.+"']
    zone: limitreq_uri
    key: "{{ .Labels.path }}"
    value: "1"
    on_resolve: delete
    ttl: 10m
`;

/**
 * Requests routed to `location /coffee` on all replicas, limited ones included: once limited, the
 * rejected load still counts, so the alert fires for as long as the load lasts (no flapping).
 */
const PROMETHEUS_RULES = `groups:
  - name: limitswitch-e2e
    interval: 1s
    rules:
      - alert: ${ALERT}
        expr: |
          label_replace(
            sum by (location) (
              rate(limitswitch_location_requests_total{job="limitswitch-replica",location="location /coffee"}[${WINDOW}])
            ),
            "path", "$1", "location", "location (/.*)"
          ) > ${THRESHOLD_PER_S}
        for: 2s
        labels:
          severity: page
        annotations:
          summary: "{{ $labels.path }} receives {{ $value }} requests/s"
`;

export interface AlertLoopStack {
  readonly cluster: CafeCluster;
  readonly prometheus: MonitoringProcess;
  readonly alertmanager: MonitoringProcess;
  /** Both monitoring logs, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** Starts it all; resolves once every process answers (Prometheus may not scrape or notify yet). */
export async function startAlertLoopStack(replicaCount: number): Promise<AlertLoopStack> {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-alert-loop-'));
  const tokenFile = join(dir, 'tokens');
  writeFileSync(tokenFile, `${TOKEN_ID}:${TOKEN}\n`);
  const rulesFile = join(dir, 'alert-rules.yaml');
  writeFileSync(rulesFile, CONTROL_PLANE_RULES);
  const controlPlanePort = await freePort();
  const statusPorts: number[] = [];
  for (let i = 0; i < replicaCount; i++) statusPorts.push(await freePort());

  // Alertmanager, then Prometheus (it needs Alertmanager's port), while the cluster starts: Prometheus
  // hands new scrape and Alertmanager targets over only every few seconds, so it should start early.
  const monitoring = startAlertmanager(alertmanagerConfig(`http://127.0.0.1:${controlPlanePort}`)).then(
    async (alertmanager) => {
      try {
        const config = prometheusConfig(statusPorts, alertmanager.port);
        return { alertmanager, prometheus: await startPrometheus({ config, rules: PROMETHEUS_RULES }) };
      } catch (err) {
        await alertmanager.stop();
        throw err;
      }
    },
  );
  const [cluster, monitors] = await Promise.allSettled([
    startCafeCluster(replicaCount, {
      controlPlanePort,
      statusPorts,
      controlPlaneArgs: ['--alert-rules', rulesFile, '--token-file', tokenFile],
    }),
    monitoring,
  ]);
  const stop = async () => {
    if (monitors.status === 'fulfilled') {
      await monitors.value.prometheus.stop();
      await monitors.value.alertmanager.stop();
    }
    if (cluster.status === 'fulfilled') await cluster.value.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  if (cluster.status === 'rejected' || monitors.status === 'rejected') {
    await stop();
    throw cluster.status === 'rejected' ? cluster.reason : (monitors as PromiseRejectedResult).reason;
  }
  const { prometheus, alertmanager } = monitors.value;
  return {
    cluster: cluster.value,
    prometheus,
    alertmanager,
    logs: () =>
      `--- prometheus\n${prometheus.log}\n--- alertmanager\n${alertmanager.log}\n` +
      `--- control plane\n${cluster.value.controlPlane.stderr}`,
    stop,
  };
}

function alertmanagerConfig(controlPlaneUrl: string): string {
  return `global:
  resolve_timeout: 5s
route:
  receiver: limitswitch
  group_by: [alertname, path]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1m
receivers:
  - name: limitswitch
    webhook_configs:
      - url: ${controlPlaneUrl}/hooks/alertmanager
        send_resolved: true
        max_alerts: 0
        http_config:
          authorization:
            type: Bearer
            credentials: ${TOKEN}
`;
}

function prometheusConfig(statusPorts: readonly number[], alertmanagerPort: number): string {
  const targets = statusPorts.map((port) => `'127.0.0.1:${port}'`).join(', ');
  return `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
scrape_configs:
  - job_name: limitswitch-replica
    static_configs:
      - targets: [${targets}]
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:${alertmanagerPort}']
`;
}

export interface AlertStatus {
  /** `inactive` when Prometheus does not list the alert. */
  readonly state: 'inactive' | 'pending' | 'firing';
  /** When the alert became pending (Prometheus' `activeAt`); null while inactive. */
  readonly activeAtMs: number | null;
}

/** The state of `alert` in Prometheus. */
export async function alertStatus(prometheus: MonitoringProcess, alert: string): Promise<AlertStatus> {
  const body = await prometheus.api<{
    data: { alerts: { labels: Record<string, string>; state: AlertStatus['state']; activeAt: string }[] };
  }>('/api/v1/alerts');
  const found = body.data.alerts.find((a) => a.labels.alertname === alert);
  return found
    ? { state: found.state, activeAtMs: Date.parse(found.activeAt) }
    : { state: 'inactive', activeAtMs: null };
}

/** An instant query's sample values. */
export async function query(prometheus: MonitoringProcess, expr: string): Promise<number[]> {
  const body = await prometheus.api<{ data: { result: { value: [number, string] }[] } }>(
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );
  return body.data.result.map((r) => Number(r.value[1]));
}

/** How many Alertmanagers Prometheus' notifier sends to (target discovery hands them over). */
export async function activeAlertmanagers(prometheus: MonitoringProcess): Promise<number> {
  const body = await prometheus.api<{ data: { activeAlertmanagers: unknown[] } }>('/api/v1/alertmanagers');
  return body.data.activeAlertmanagers.length;
}
