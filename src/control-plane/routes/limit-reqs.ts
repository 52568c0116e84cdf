/**
 * limit_req counters, cluster-wide: `/api/{version}/http/limit_reqs/` and `/{zone}` (NGINX Plus shape,
 * sums over every replica that ever reported, stopped ones included) and the short `/limit_reqs`,
 * with `?by=replica` for the breakdown. DELETE resets a zone's counters on every replica record.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pickCounters } from '../../engine/counters.ts';
import {
  LIMIT_REQ,
  LIMIT_REQ_COUNTERS,
  type LimitReqCounters,
} from '../../engine/limit-req/limit-req-zone.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import { answerWrite, auditNote } from '../write-outcome.ts';

type ZoneParams = { zone: string };

export function limitReqRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  const collection = async (request: FastifyRequest) => {
    const fields = fieldSet(request);
    const { totals } = await ctx.zones.limitReqTotals();
    const out: Record<string, Partial<LimitReqCounters>> = Object.create(null);
    for (const [zone, counters] of totals) out[zone] = pick(counters, fields);
    return out;
  };

  addSpecRoute(app, ctx, 'getHttpLimitReqs', collection);

  addSpecRoute(app, ctx, 'getClusterLimitReqs', async (request) => {
    const { by } = request.query as { by?: 'replica' };
    if (by !== 'replica') return collection(request);
    const fields = fieldSet(request);
    const { byReplica } = await ctx.zones.limitReqTotals();
    const out: Record<string, Record<string, Partial<LimitReqCounters>>> = Object.create(null);
    for (const replica of Object.keys(byReplica).sort()) {
      out[replica] = Object.create(null);
      for (const [zone, counters] of Object.entries(byReplica[replica]!)) {
        out[replica]![zone] = pick(counters, fields);
      }
    }
    return out;
  });

  addSpecRoute(app, ctx, 'getHttpLimitReqZone', async (request) => {
    const { zone } = request.params as ZoneParams;
    const { totals } = await ctx.zones.limitReqTotals();
    const counters = totals.get(zone);
    if (!counters) throw new LimitswitchError('LimitReqNotFound');
    return pick(counters, fieldSet(request));
  });

  addSpecRoute(app, ctx, 'deleteHttpLimitReqZone', async (request: FastifyRequest, reply: FastifyReply) => {
    const { zone } = request.params as ZoneParams;
    const { totals } = await ctx.zones.limitReqTotals();
    if (!totals.has(zone)) throw new LimitswitchError('LimitReqNotFound');
    await ctx.gateway.call('resetCounters', (s) => s.counters.reset(LIMIT_REQ.kind, zone));
    // No keyval revision is produced; the header carries the current one.
    const revision = await ctx.gateway.revision();
    const outcome = {
      status: 204,
      revision,
      zone,
      op: 'reset',
      changes: [],
      note: auditNote(ctx, request),
      audited: false,
    };
    return answerWrite(ctx, request, reply, outcome, null);
  });
}

/** `?fields=a,b`: those fields; `?fields=` none (`{}`); absent: all. */
function fieldSet(request: FastifyRequest): ReadonlySet<string> | null {
  const { fields } = request.query as { fields?: string };
  return fields === undefined ? null : new Set(fields.split(','));
}

function pick(counters: LimitReqCounters, fields: ReadonlySet<string> | null): Partial<LimitReqCounters> {
  return pickCounters(counters, LIMIT_REQ_COUNTERS, fields);
}
