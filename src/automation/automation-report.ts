/**
 * What alert automation tells the world about each (rule, alert) pair: the result it answers to
 * Alertmanager, and for real changes (set, delete, restore, and their dry-run twins) an audit entry
 * naming the alert and its fingerprint, a log line and a counter.
 */
import { type AuditNote, auditEntries } from '../store/audit-trail.ts';
import type { AlertStatus } from './alertmanager-payload.ts';
import type { StoreCall } from './automation-leases.ts';
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

/** Whether a result of this action is a change worth an audit entry. */
export function isAudited(action: PlanAction): boolean {
  return AUDITED.has(action);
}

/** Who changed the key and why: the alert, its fingerprint and rule (for the audit trail). */
export function auditNoteFor(origin: Origin, actor: Actor, dryRun: boolean, nowMs: number): AuditNote {
  const reason = `${dryRun ? 'dry run: ' : ''}alert ${origin.alertname} ${origin.status} (fingerprint ${
    origin.fingerprint
  }, rule ${origin.rule})${origin.note ? `, ${origin.note}` : ''}`;
  return {
    timeMs: nowMs,
    tokenId: actor.tokenId,
    client: actor.client,
    reason: reason.slice(0, MAX_REASON_LENGTH),
  };
}

export interface ReportDeps {
  readonly call: StoreCall;
  readonly counters: AutomationCounters;
  readonly log: AutomationLogger;
}

/**
 * Count, log and audit one result. `stored`: the key's write recorded the audit entry itself; otherwise
 * (a dry run, a key already gone) it is appended here, and a lost line is logged, never an error.
 */
export async function reportResult(
  result: AutomationResult,
  note: AuditNote | null,
  stored: boolean,
  deps: ReportDeps,
): Promise<void> {
  const { counters, log, call } = deps;
  const fields = { automation: result };
  if (note === null) {
    if (result.action === 'left')
      log.warn(fields, `${result.zone} ${result.key}: changed by someone else, not reverted`);
    else log.debug(fields, `${result.zone} ${result.key}: ${result.action}`);
    return;
  }
  counters.countChange(result.rule, result.action, result.dry_run);
  const revision = result.revision ?? (await call('head', (s) => s.keyvals.head())).revision;
  const [entry] = auditEntries(note, result.zone, revision, [
    { key: result.key, old: result.old, new: result.new },
  ]);
  log.info({ audit: entry }, `${result.dry_run ? 'dry run ' : ''}${result.action} ${result.zone}`);
  if (stored) return;
  try {
    await call('appendAudit', (s) => s.audit.append(entry!));
  } catch (err) {
    // The change is committed; losing its audit line must not turn it into a failure.
    log.warn({ err, audit: entry }, 'audit entry not stored');
  }
}
