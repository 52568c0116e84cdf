/**
 * limit_req and limit_conn counters, cluster-wide: `/api/{version}/http/limit_reqs/`,
 * `/http/limit_conns/` and their `/{zone}` (NGINX Plus shape, sums over every replica that ever
 * reported, stopped ones included), and the short `/limit_reqs`, `/limit_conns`, with `?by=replica`
 * for the breakdown. DELETE resets a zone's counters on every replica record.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Counters, pickCounters } from '../../engine/counters.ts';
import { type ErrorCode, LimitswitchError } from '../../shared/errors.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import { answerWrite, auditNote } from '../write-outcome.ts';
import { LIMIT_CONN_LIMITER, LIMIT_REQ_LIMITER, type Limiter } from '../zone-directory.ts';

type ZoneParams = { zone: string };

/** A limiter's routes: its spec operations and its not-found error. */
interface CounterRoutes<F extends string> {
  readonly limiter: Limiter<F>;
  readonly list: string;
  readonly cluster: string;
  readonly zone: string;
  /** `/limit_reqs/{zone}`: the short form of `zone`. */
  readonly clusterZone: string;
  readonly reset: string;
  readonly notFound: ErrorCode;
}

export function limiterCounterRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  counterRoutes(app, ctx, {
    limiter: LIMIT_REQ_LIMITER,
    list: 'getHttpLimitReqs',
    cluster: 'getClusterLimitReqs',
    zone: 'getHttpLimitReqZone',
    clusterZone: 'getClusterLimitReqZone',
    reset: 'deleteHttpLimitReqZone',
    notFound: 'LimitReqNotFound',
  });
  counterRoutes(app, ctx, {
    limiter: LIMIT_CONN_LIMITER,
    list: 'getHttpLimitConns',
    cluster: 'getClusterLimitConns',
    zone: 'getHttpLimitConnZone',
    clusterZone: 'getClusterLimitConnZone',
    reset: 'deleteHttpLimitConnZone',
    notFound: 'LimitConnNotFound',
  });
}

function counterRoutes<F extends string>(
  app: FastifyInstance,
  ctx: ControlPlaneContext,
  routes: CounterRoutes<F>,
): void {
  const { limiter } = routes;
  const pick = (counters: Counters<F>, fields: ReadonlySet<string> | null) =>
    pickCounters(counters, limiter.family.fields, fields);
  const collection = async (request: FastifyRequest) => {
    const fields = fieldSet(request);
    const { totals } = await ctx.zones.counterTotals(limiter);
    const out: Record<string, Partial<Counters<F>>> = Object.create(null);
    for (const [zone, counters] of totals) out[zone] = pick(counters, fields);
    return out;
  };

  addSpecRoute(app, ctx, routes.list, collection);

  addSpecRoute(app, ctx, routes.cluster, async (request) => {
    const { by } = request.query as { by?: 'replica' };
    if (by !== 'replica') return collection(request);
    const fields = fieldSet(request);
    const { byReplica } = await ctx.zones.counterTotals(limiter);
    const out: Record<string, Record<string, Partial<Counters<F>>>> = Object.create(null);
    for (const replica of Object.keys(byReplica).sort()) {
      out[replica] = Object.create(null);
      const zones = byReplica[replica]!;
      for (const zone of Object.keys(zones).sort()) {
        const counters = zones[zone]!;
        out[replica]![zone] = pick(counters, fields);
      }
    }
    return out;
  });

  const oneZone = async (request: FastifyRequest) => {
    const { zone } = request.params as ZoneParams;
    const { totals } = await ctx.zones.counterTotals(limiter);
    const counters = totals.get(zone);
    if (!counters) throw new LimitswitchError(routes.notFound);
    return pick(counters, fieldSet(request));
  };
  addSpecRoute(app, ctx, routes.zone, oneZone);
  addSpecRoute(app, ctx, routes.clusterZone, oneZone);

  addSpecRoute(app, ctx, routes.reset, async (request: FastifyRequest, reply: FastifyReply) => {
    const { zone } = request.params as ZoneParams;
    const { totals } = await ctx.zones.counterTotals(limiter);
    if (!totals.has(zone)) throw new LimitswitchError(routes.notFound);
    await ctx.gateway.call('resetCounters', (s) => s.counters.reset(limiter.family.kind, zone));
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
