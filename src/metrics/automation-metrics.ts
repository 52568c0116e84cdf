/**
 * Alert automation's Prometheus metrics, registered in the control plane's registry (so `/metrics`
 * serves them with the API's own). Every series carries the rule name; `rule=""` counts what matched
 * no rule (a notification with no matching alert, a payload rejected before any rule was looked at).
 */
import { Counter, type Registry } from 'prom-client';

export class AutomationMetrics {
  readonly #notifications: Counter<'rule'>;
  readonly #changes: Counter<'rule' | 'action'>;
  readonly #dryRunChanges: Counter<'rule' | 'action'>;
  readonly #errors: Counter<'rule' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#notifications = new Counter({
      name: 'limitswitch_automation_notifications_total',
      help: 'Alertmanager notifications received, by rule that one of their alerts matched ("" for none)',
      labelNames: ['rule'],
      registers,
    });
    this.#changes = new Counter({
      name: 'limitswitch_automation_changes_total',
      help: 'Keyval changes applied by alert automation, by rule and action (set, delete, restore)',
      labelNames: ['rule', 'action'],
      registers,
    });
    this.#dryRunChanges = new Counter({
      name: 'limitswitch_automation_dry_run_changes_total',
      help: 'Keyval changes a dry-run rule would have applied, by rule and action (set, delete, restore)',
      labelNames: ['rule', 'action'],
      registers,
    });
    this.#errors = new Counter({
      name: 'limitswitch_automation_errors_total',
      help: 'Alerts or notifications that could not be applied, by rule and reason',
      labelNames: ['rule', 'reason'],
      registers,
    });
  }

  countNotification(rule: string): void {
    this.#notifications.inc({ rule });
  }

  countChange(rule: string, action: string, dryRun: boolean): void {
    (dryRun ? this.#dryRunChanges : this.#changes).inc({ rule, action });
  }

  countError(rule: string, reason: string): void {
    this.#errors.inc({ rule, reason });
  }
}
