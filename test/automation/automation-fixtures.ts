/**
 * Shared setup for alert automation tests: a rules file covering every rule feature, notifications
 * shaped as Alertmanager sends them, and an `AlertAutomation` on a real store with a settable clock.
 */
import { AlertAutomation } from '../../src/automation/alert-automation.ts';
import { parseAlertRules } from '../../src/automation/alert-rules.ts';
import type {
  AlertmanagerAlert,
  AlertmanagerNotification,
  AlertStatus,
} from '../../src/automation/alertmanager-payload.ts';
import { LimitswitchError } from '../../src/shared/errors.ts';
import type { KeyvalZoneInfo } from '../../src/store/cluster-registry.ts';
import type { Store } from '../../src/store/store.ts';

export const T0 = 1_700_000_000_000;

export const ZONES: readonly KeyvalZoneInfo[] = [
  { name: 'limitreq_uri', type: 'prefix', timeoutMs: null, sizeBytes: null },
  { name: 'limitper_server', type: 'string', timeoutMs: 3_600_000, sizeBytes: null },
  { name: 'blocklist', type: 'ip', timeoutMs: null, sizeBytes: null },
];

export const RULES_YAML = `rules:
  - name: coffee
    matchers: ['alertname="CoffeeOverloaded"', 'path=~"/.+"']
    zone: limitreq_uri
    key: "{{ .Labels.path }}"
    value: "1"
    on_resolve: restore
    ttl: 10m
  - name: server
    matchers: [alertname=ServerOverloaded]
    zone: limitper_server
    key: "{{ .Labels.host }}"
    value: "1"
    ttl: 5m
    min_hold: 2m
  - name: tea-dry
    matchers: [alertname=TeaRejections]
    zone: limitreq_uri
    key: /tea
    value: "1"
    ttl: 10m
    dry_run: true
  - name: abuser
    matchers: [alertname=Abuser]
    zone: blocklist
    key: "{{ .Labels.client }}"
    value: "1"
    ttl: 1h
  - name: ghost
    matchers: [alertname=Ghost]
    zone: no_such_zone
    key: x
    value: "1"
    ttl: 1m
`;

export function alert(
  status: AlertStatus,
  fingerprint: string,
  labels: Record<string, string>,
): AlertmanagerAlert {
  return {
    status,
    labels,
    annotations: { summary: 'test' },
    startsAt: '2026-01-01T00:00:00Z',
    endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-01-01T00:05:00Z',
    generatorURL: 'http://prometheus.example:9090/graph',
    fingerprint,
  };
}

export function notification(alerts: AlertmanagerAlert[]): AlertmanagerNotification {
  return {
    version: '4',
    receiver: 'limitswitch',
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    alerts,
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager.example:9093',
    groupKey: '{}:{}',
    truncatedAlerts: 0,
  };
}

/** Counters kept in a map: `countChange('coffee','set',false)` → `change coffee set` += 1. */
export class CountingCounters {
  readonly counts = new Map<string, number>();

  #inc(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
  }

  countNotification(rule: string): void {
    this.#inc(`notification ${rule}`);
  }

  countChange(rule: string, action: string, dryRun: boolean): void {
    this.#inc(`${dryRun ? 'dry-run ' : ''}change ${rule} ${action}`);
  }

  countError(rule: string, reason: string): void {
    this.#inc(`error ${rule} ${reason}`);
  }

  get(name: string): number {
    return this.counts.get(name) ?? 0;
  }
}

export class Clock {
  nowMs = T0;
  readonly now = () => this.nowMs;
}

export const ACTOR = { tokenId: 'alertmanager', client: '10.0.0.9' } as const;

/** An automation over `store` (as one control plane would run it). */
export function automationOn(
  store: Store,
  clock: Clock,
  options: { counters?: CountingCounters; warnings?: string[]; yaml?: string } = {},
): AlertAutomation {
  const warnings = options.warnings ?? [];
  return new AlertAutomation(parseAlertRules(options.yaml ?? RULES_YAML, 'rules.yaml'), {
    call: (_op, fn) => fn(store),
    zoneInfo: async (name) => {
      const zone = (await store.registry.zones()).find((z) => z.name === name);
      if (!zone) throw new LimitswitchError('KeyvalNotFound');
      return zone;
    },
    checkKey: (zone, key) =>
      zone.type === 'ip' && !/^[0-9.]+(\/[0-9]+)?$/.test(key) ? `bad address "${key}"` : null,
    counters: options.counters ?? new CountingCounters(),
    log: {
      info: () => {},
      debug: () => {},
      warn: (_obj, msg) => warnings.push(msg),
    },
    clock: { nowMs: clock.now },
    lockWaitMs: 5000,
  });
}
