/**
 * What alert automation tells the world about each (rule, alert) pair: the result it answers to
 * Alertmanager, and for real changes (set, delete, restore, and their dry-run twins) an audit entry
 * naming the alert and its fingerprint, a log line and a counter.
 */
import type { AuditEntry } from '../store/keyval-store.ts';
import type { AlertStatus } from './alertmanager-payload.ts';
import type { StoreCall } from './automation-zone.ts';
import type { PlanAction } from './key-state.ts';

/** The pino subset used here. */
export interface AutomationLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Counters (the control plane passes `AutomationMetrics`). */
export interface AutomationCounters {
  countNotification(rule: string): void;
  countChange(rule: string, action: string, dryRun: boolean): void;
  countError(rule: string, reason: string): void;
}

/** Who sent the notification (for the audit trail). */
export interface Actor {
  readonly tokenId: string | null;
  readonly client: string;
}

/** What one (rule, alert) pair did. */
export interface AutomationResult {
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
  readonly status: AlertStatus;
  readonly zone: string;
  readonly key: string;
  readonly action: PlanAction;
  readonly old: string | null;
  readonly new: string | null;
  readonly dry_run: boolean;
  /** The store revision of the key's write; `null` when the key was not written. */
  readonly revision: number | null;
}

/** A (rule, alert) pair that could not be applied. */
export interface AutomationError {
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
  readonly reason: string;
  readonly text: string;
}

export interface NotificationOutcome {
  readonly alerts: number;
  readonly results: AutomationResult[];
  readonly errors: AutomationError[];
}

/** Which alert (and rule) a result comes from. */
export interface Origin {
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
  readonly status: AlertStatus;
  readonly note?: string;
}

const AUDITED: ReadonlySet<PlanAction> = new Set(['set', 'delete', 'restore']);
const MAX_REASON_LENGTH = 256;

export interface ReportDeps {
  readonly call: StoreCall;
  readonly counters: AutomationCounters;
  readonly log: AutomationLogger;
  readonly nowMs: () => number;
}

/** Count, log and audit one result (a lost audit line is logged, never an error). */
export async function reportResult(
  result: AutomationResult,
  origin: Origin,
  actor: Actor,
  deps: ReportDeps,
): Promise<void> {
  const { counters, log, call, nowMs } = deps;
  const fields = { automation: result };
  if (!AUDITED.has(result.action)) {
    if (result.action === 'left')
      log.warn(fields, `${result.zone} ${result.key}: changed by someone else, not reverted`);
    else log.debug(fields, `${result.zone} ${result.key}: ${result.action}`);
    return;
  }
  counters.countChange(result.rule, result.action, result.dry_run);
  const reason = `${result.dry_run ? 'dry run: ' : ''}alert ${origin.alertname} ${origin.status} (fingerprint ${
    origin.fingerprint
  }, rule ${origin.rule})${origin.note ? `, ${origin.note}` : ''}`;
  const entry: AuditEntry = {
    timeMs: nowMs(),
    tokenId: actor.tokenId,
    client: actor.client,
    zone: result.zone,
    key: result.key,
    old: result.old,
    new: result.new,
    revision: result.revision ?? (await call('revision', (s) => s.revision())),
    reason: reason.slice(0, MAX_REASON_LENGTH),
  };
  log.info({ audit: entry }, `${result.dry_run ? 'dry run ' : ''}${result.action} ${result.zone}`);
  try {
    await call('appendAudit', (s) => s.appendAudit(entry));
  } catch (err) {
    // The change is committed; losing its audit line must not turn it into a failure.
    log.warn({ err, audit: entry }, 'audit entry not stored');
  }
}
