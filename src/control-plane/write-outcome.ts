/**
 * How every write finishes: the audit trail (log, and the store when the mutation did not record it
 * itself), the mutation metric, the revision header, and `?wait=applied` (the normal status once every
 * live replica reports the revision, else 202 with the laggards).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AuditNote, auditEntries } from '../store/audit-trail.ts';
import type { ControlPlaneContext } from './context.ts';
import { parseWaitTimeout, waitApplied } from './wait-applied.ts';

export const REVISION_HEADER = 'x-limitswitch-revision';
export const REASON_HEADER = 'x-limitswitch-reason';
const MAX_REASON_LENGTH = 256;

export interface WriteOutcome {
  /** 201 or 204. */
  readonly status: number;
  readonly revision: number;
  readonly zone: string;
  /** Metric label: add, change, delete, empty, reset. */
  readonly op: string;
  /** One audit line per key touched; none for whole-zone operations on an empty zone. */
  readonly changes: readonly { key: string; old: string | null; new: string | null }[];
  readonly note: AuditNote;
  /** The store recorded the audit entries with the change (keyval mutations given the note). */
  readonly audited: boolean;
}

/** The wait arguments, validated before the write so a bad `timeout` changes nothing. */
export function writeWaitMs(request: FastifyRequest): number | null {
  const query = request.query as { wait?: string; timeout?: string };
  const timeoutMs = parseWaitTimeout(query.timeout);
  return query.wait === 'applied' ? timeoutMs : null;
}

/** Who writes, when, and why (`X-Limitswitch-Reason`), for the audit entries of a write. */
export function auditNote(ctx: ControlPlaneContext, request: FastifyRequest): AuditNote {
  const reasonHeader = request.headers[REASON_HEADER];
  return {
    timeMs: ctx.clock.nowMs(),
    tokenId: request.limitswitchPrincipal?.tokenId ?? null,
    client: request.ip,
    reason: typeof reasonHeader === 'string' ? reasonHeader.slice(0, MAX_REASON_LENGTH) : null,
  };
}

export async function answerWrite(
  ctx: ControlPlaneContext,
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: WriteOutcome,
  waitMs: number | null,
): Promise<unknown> {
  ctx.metrics.countMutation(outcome.zone, outcome.op);
  await recordAudit(ctx, request, outcome);
  reply.header(REVISION_HEADER, String(outcome.revision));
  if (waitMs !== null) {
    const report = await waitApplied(
      () => ctx.gateway.call('replicas', (s) => s.registry.replicas()),
      (revision) => ctx.gateway.call('commitAt', (s) => s.keyvals.commitAt(revision)),
      outcome.revision,
      waitMs,
      ctx.waitPollMs,
    );
    if (!report.applied) return reply.code(202).send(report);
  }
  return reply.code(outcome.status).send();
}

async function recordAudit(ctx: ControlPlaneContext, request: FastifyRequest, outcome: WriteOutcome) {
  for (const entry of auditEntries(outcome.note, outcome.zone, outcome.revision, outcome.changes)) {
    request.log.info({ audit: entry }, `${outcome.op} ${outcome.zone}`);
    if (outcome.audited) continue;
    try {
      await ctx.gateway.call('appendAudit', (s) => s.audit.append(entry));
    } catch (err) {
      // The write is committed; losing its audit line must not turn it into a failure.
      request.log.error({ err, audit: entry }, 'audit entry not stored');
    }
  }
}
