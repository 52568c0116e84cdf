/**
 * `/api/{version}/http/keyvals/` and `/{zone}`: NGINX Plus keyval semantics over the shared store.
 * Every check happens before the one atomic store mutation, so a rejected request changes nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LimitswitchError } from '../../shared/errors.ts';
import type { KeyvalZoneInfo } from '../../store/keyval-store.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import { parsePatchBody, parsePostBody } from '../keyval-body.ts';
import { answerWrite, writeWaitMs } from '../write-outcome.ts';

type ZoneParams = { zone: string };

export function keyvalRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getHttpKeyvals', async (request) => {
    const { fields } = request.query as { fields?: string };
    const only = fields === undefined ? null : new Set(fields.split(',').filter((f) => f !== ''));
    const nowMs = Date.now();
    const zones = await ctx.zones.keyvalZones();
    const out: Record<string, Record<string, string>> = Object.create(null);
    for (const name of zones.keys()) {
      const entries = await ctx.gateway.call('getZone', (s) => s.getZone(name, nowMs));
      out[name] = pick(entries, only);
    }
    return out;
  });

  addSpecRoute(app, ctx, 'getHttpKeyvalZone', async (request) => {
    const { zone } = request.params as ZoneParams;
    const { key } = request.query as { key?: string };
    await ctx.zones.keyvalZone(zone);
    const entries = await ctx.gateway.call('getZone', (s) => s.getZone(zone, Date.now()));
    if (key === undefined) return pick(entries, null);
    const entry = Object.hasOwn(entries, key) ? entries[key] : undefined;
    if (!entry) throw new LimitswitchError('KeyvalKeyNotFound');
    return withKey(key, entry.value);
  });

  addSpecRoute(app, ctx, 'postHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs } = await writeTarget(ctx, request);
    const zone = info.name;
    const entries = parsePostBody(request.body, info, Date.now());
    const result = await ctx.gateway.call('add', (s) => s.add(zone, entries));
    const changes = Object.keys(entries).map((key) => ({ key, old: null, new: entries[key]!.value }));
    return answerWrite(
      ctx,
      request,
      reply,
      { status: 201, revision: result.revision, zone, op: 'add', changes },
      waitMs,
    );
  });

  addSpecRoute(app, ctx, 'patchHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs } = await writeTarget(ctx, request);
    const zone = info.name;
    const { key, entry } = parsePatchBody(request.body, info, Date.now());
    const result = entry
      ? await ctx.gateway.call('change', (s) => s.change(zone, key, entry))
      : await ctx.gateway.call('delete', (s) => s.delete(zone, key));
    const old = result.previous[key] ?? null;
    const change = { key, old, new: entry?.value ?? null };
    const op = entry ? 'change' : 'delete';
    return answerWrite(
      ctx,
      request,
      reply,
      { status: 204, revision: result.revision, zone, op, changes: [change] },
      waitMs,
    );
  });

  addSpecRoute(app, ctx, 'deleteHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs } = await writeTarget(ctx, request);
    const zone = info.name;
    const result = await ctx.gateway.call('empty', (s) => s.empty(zone));
    const keys = Object.keys(result.previous);
    const changes =
      keys.length === 0
        ? [{ key: null, old: null, new: null }]
        : keys.map((key) => ({ key, old: result.previous[key] ?? null, new: null }));
    return answerWrite(
      ctx,
      request,
      reply,
      { status: 204, revision: result.revision, zone, op: 'empty', changes },
      waitMs,
    );
  });
}

async function writeTarget(
  ctx: ControlPlaneContext,
  request: FastifyRequest,
): Promise<{ info: KeyvalZoneInfo; waitMs: number | null }> {
  const { zone } = request.params as ZoneParams;
  const waitMs = writeWaitMs(request);
  return { info: await ctx.zones.keyvalZone(zone), waitMs };
}

/** Values only (expiry is not shown), optionally just some keys; a prototype-free object. */
function pick(
  entries: Record<string, { value: string }>,
  only: ReadonlySet<string> | null,
): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const key of Object.keys(entries)) {
    if (only === null || only.has(key)) out[key] = entries[key]!.value;
  }
  return out;
}

function withKey(key: string, value: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  out[key] = value;
  return out;
}
