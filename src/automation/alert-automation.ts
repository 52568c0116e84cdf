/**
 * Alert automation: Alertmanager notifications in, keyval changes out. Each alert is matched against
 * every rule; each (rule, alert) pair becomes an event on one switched key, handled under that key's
 * lease: read the automation record and the key, plan (`key-state.ts`), write, audit, count.
 *
 * Retries are safe: a notification handled twice finds its holders already recorded and changes
 * nothing but the TTL; a notification that failed half-way (store unreachable → 503, Alertmanager
 * retries) converges on the retry, because switch-on writes record first and key second, and
 * switch-off writes key first and record second.
 */
import type { Clock } from '../shared/clock.ts';
import { isLimitswitchError } from '../shared/errors.ts';
import type { AuditNote } from '../store/audit-trail.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';
import type { KeyvalEntry } from '../store/keyval-store.ts';
import type { Lease } from '../store/lease-store.ts';
import type { AlertRule, AlertRules } from './alert-rules.ts';
import type { AlertmanagerAlert, AlertmanagerNotification } from './alertmanager-payload.ts';
import {
  AutomationLeases,
  type AutomationLeasesOptions,
  type StoreCall,
  type SwitchedKey,
} from './automation-leases.ts';
import {
  type Actor,
  type AutomationCounters,
  type AutomationError,
  type AutomationLogger,
  type AutomationResult,
  auditNoteFor,
  isAudited,
  type NotificationOutcome,
  type Origin,
  reportResult,
} from './automation-report.ts';
import { type AlertEvent, type KeyState, onDue, onFiring, onResolved, type Plan } from './key-state.ts';
import { matchesAll } from './label-matcher.ts';

export interface AlertAutomationDeps extends AutomationLeasesOptions {
  readonly call: StoreCall;
  readonly clock: Clock;
  /** The zone's declaration; throws `KeyvalNotFound` for an unknown zone. */
  zoneInfo(name: string): Promise<KeyvalZoneInfo>;
  /** Why `key` cannot be a key of `zone` (e.g. not an address in a `type=ip` zone), or `null`. */
  checkKey(zone: KeyvalZoneInfo, key: string): string | null;
  readonly counters: AutomationCounters;
  readonly log: AutomationLogger;
  /** Called after each keyval mutation (the API's mutation metric). */
  mutated?(zone: string, op: string): void;
}

interface Task {
  readonly rule: AlertRule;
  readonly alert: AlertmanagerAlert;
  readonly alertname: string;
  readonly key: string;
  readonly value: string;
}

export class AlertAutomation {
  readonly rules: AlertRules;
  readonly #deps: AlertAutomationDeps;
  readonly #leases: AutomationLeases;
  readonly #now: () => number;

  constructor(rules: AlertRules, deps: AlertAutomationDeps) {
    this.rules = rules;
    this.#deps = deps;
    this.#leases = new AutomationLeases(deps.call, deps);
    this.#now = () => deps.clock.nowMs();
  }

  /** Apply one notification; store failures propagate (the caller answers 503). */
  async handle(notification: AlertmanagerNotification, actor: Actor): Promise<NotificationOutcome> {
    const { counters, log } = this.#deps;
    const errors: AutomationError[] = [];
    const groups = new Map<string, Task[]>();
    const matched = new Set<string>();
    for (const alert of notification.alerts) {
      const alertname = alert.labels.alertname ?? '';
      for (const rule of this.rules.rules) {
        if (!matchesAll(rule.matchers, alert.labels)) continue;
        matched.add(rule.name);
        const key = rule.key.render(alert.labels);
        const value = rule.value.render(alert.labels);
        if ('missing' in key || 'missing' in value) {
          const missing = 'missing' in key ? key.missing : (value as { missing: string }).missing;
          const text = `label "${missing}" is missing or empty`;
          errors.push(this.#error(rule.name, alertname, alert.fingerprint, 'label_missing', text));
          continue;
        }
        const task: Task = { rule, alert, alertname, key: key.value, value: value.value };
        const group = `${rule.dryRun}\u0000${rule.zone}\u0000${key.value}`;
        groups.set(group, [...(groups.get(group) ?? []), task]);
      }
    }
    for (const rule of matched) counters.countNotification(rule);
    if (matched.size === 0) counters.countNotification('');
    if ((notification.truncatedAlerts ?? 0) > 0) {
      // The left-out alerts' changes are lost for now; their TTL bounds the damage.
      counters.countError('', 'truncated_alerts');
      log.warn({ truncatedAlerts: notification.truncatedAlerts }, 'notification truncated by max_alerts');
    }
    const results: AutomationResult[] = [];
    for (const tasks of groups.values()) {
      const first = tasks[0]!;
      const target: SwitchedKey = { zone: first.rule.zone, key: first.key, dryRun: first.rule.dryRun };
      const checked = await this.#check(target);
      if ('reason' in checked) {
        const refused = checked;
        for (const t of tasks) {
          errors.push(
            this.#error(t.rule.name, t.alertname, t.alert.fingerprint, refused.reason, refused.text),
          );
        }
        continue;
      }
      try {
        await this.#leases.withLease(target.zone, target.key, async (lease) => {
          for (const task of tasks) {
            results.push(await this.#applyTask(lease, target, task, actor, checked.info.sizeBytes));
          }
        });
      } catch (err) {
        counters.countError(first.rule.name, 'store_unavailable');
        throw err;
      }
    }
    return { alerts: notification.alerts.length, results, errors };
  }

  /** Carry out the reverts whose `min_hold` has passed. */
  async sweep(actor: Actor): Promise<AutomationResult[]> {
    const due = (await this.#leases.all(this.#now())).filter(({ state }) => isDue(state, this.#now()));
    const results: AutomationResult[] = [];
    for (const { target } of due) {
      await this.#leases.withLease(target.zone, target.key, async (lease) => {
        const nowMs = this.#now();
        const state = await this.#leases.read(target, nowMs);
        if (!state?.revert || !isDue(state, nowMs)) return;
        const current = await this.#current(target, state, nowMs);
        const origin: Origin = { ...state.revert, status: 'resolved', note: 'min_hold elapsed' };
        // A revert puts back what was there: no zone size to check it against.
        results.push(await this.#execute(lease, target, onDue(state, current, nowMs), origin, actor, null));
      });
    }
    return results;
  }

  async #applyTask(
    lease: Lease,
    target: SwitchedKey,
    task: Task,
    actor: Actor,
    sizeBytes: number | null,
  ): Promise<AutomationResult> {
    const nowMs = this.#now();
    const state = await this.#leases.read(target, nowMs);
    const current = await this.#current(target, state, nowMs);
    const { rule, alert } = task;
    const event: AlertEvent = {
      rule: rule.name,
      alertname: task.alertname,
      fingerprint: alert.fingerprint,
      value: task.value,
      onResolve: rule.onResolve,
      ttlMs: rule.ttlMs,
      minHoldMs: rule.minHoldMs,
    };
    const plan =
      alert.status === 'firing'
        ? onFiring(state, current, event, nowMs)
        : onResolved(state, current, event, nowMs);
    const origin: Origin = {
      rule: rule.name,
      alertname: task.alertname,
      fingerprint: alert.fingerprint,
      status: alert.status,
    };
    return this.#execute(lease, target, plan, origin, actor, sizeBytes);
  }

  /** The key as the plan should see it: the store's entry, or for a dry run the value it would hold. */
  async #current(target: SwitchedKey, state: KeyState | null, nowMs: number): Promise<KeyvalEntry | null> {
    if (target.dryRun && state) return { value: state.applied, expireAtMs: state.expireAtMs };
    const entries = await this.#deps.call('getZone', (s) => s.keyvals.getZone(target.zone, nowMs));
    return Object.hasOwn(entries, target.key) ? entries[target.key]! : null;
  }

  async #execute(
    lease: Lease,
    target: SwitchedKey,
    plan: Plan,
    origin: Origin,
    actor: Actor,
    sizeBytes: number | null,
  ): Promise<AutomationResult> {
    const switchingOff = plan.state === null;
    if (!switchingOff && plan.state !== undefined) await this.#leases.write(lease, target, plan.state);
    const note = isAudited(plan.action) ? auditNoteFor(origin, actor, target.dryRun, this.#now()) : null;
    let revision: number | null = null;
    if (plan.write && !target.dryRun) revision = await this.#writeKey(target, plan.write, note, sizeBytes);
    if (switchingOff) await this.#leases.write(lease, target, null);
    const result: AutomationResult = {
      rule: origin.rule,
      alertname: origin.alertname,
      fingerprint: origin.fingerprint,
      status: origin.status,
      zone: target.zone,
      key: target.key,
      action: plan.action,
      old: plan.old,
      new: plan.new,
      dry_run: target.dryRun,
      revision,
    };
    // A key written with the note has its audit entry already, from the same atomic store step.
    await reportResult(result, note, revision !== null, this.#deps);
    return result;
  }

  async #writeKey(
    target: SwitchedKey,
    write: NonNullable<Plan['write']>,
    note: AuditNote | null,
    sizeBytes: number | null,
  ): Promise<number | null> {
    const { call, mutated } = this.#deps;
    const options = { note: note ?? undefined, sizeBytes };
    if (write.op === 'set') {
      const result = await call('set', (s) => s.keyvals.set(target.zone, target.key, write.entry, options));
      mutated?.(target.zone, 'set');
      return result.revision;
    }
    try {
      const result = await call('delete', (s) => s.keyvals.delete(target.zone, target.key, options));
      mutated?.(target.zone, 'delete');
      return result.revision;
    } catch (err) {
      // Gone already (expired a moment ago): the revert is done.
      if (isLimitswitchError(err) && err.code === 'KeyvalKeyNotFound') return null;
      throw err;
    }
  }

  /** The zone the key belongs to, or why the key cannot be written. */
  async #check(target: SwitchedKey): Promise<{ info: KeyvalZoneInfo } | { reason: string; text: string }> {
    let info: KeyvalZoneInfo;
    try {
      info = await this.#deps.zoneInfo(target.zone);
    } catch (err) {
      if (isLimitswitchError(err) && err.code === 'KeyvalNotFound') {
        return { reason: 'zone_not_found', text: `keyval zone "${target.zone}" not found` };
      }
      throw err;
    }
    const problem = this.#deps.checkKey(info, target.key);
    return problem === null ? { info } : { reason: 'invalid_key', text: problem };
  }

  #error(
    rule: string,
    alertname: string,
    fingerprint: string,
    reason: string,
    text: string,
  ): AutomationError {
    this.#deps.counters.countError(rule, reason);
    this.#deps.log.warn({ rule, alertname, fingerprint, reason }, text);
    return { rule, alertname, fingerprint, reason, text };
  }
}

function isDue(state: KeyState, nowMs: number): boolean {
  return state.revert !== null && state.revert.atMs <= nowMs && Object.keys(state.holders).length === 0;
}
