/**
 * `/api/{version}/http/keyvals/` and `/{zone}`: NGINX Plus keyval semantics over the shared store.
 * Every check happens before the one atomic store mutation, so a rejected request changes nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LimitswitchError } from '../../shared/errors.ts';
import type { AuditNote } from '../../store/audit-trail.ts';
import type { KeyvalZoneInfo } from '../../store/cluster-registry.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import { keyWarnings, WARNING_HEADER, warningHeaderValue } from '../key-warnings.ts';
import { parsePatchBody, parsePostBody } from '../keyval-body.ts';
import { answerWrite, auditNote, writeWaitMs } from '../write-outcome.ts';

type ZoneParams = { zone: string };

export function keyvalRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getHttpKeyvals', async (request) => {
    const { fields } = request.query as { fields?: string };
    const only = fields === undefined ? null : new Set(fields.split(',').filter((f) => f !== ''));
    const nowMs = ctx.clock.nowMs();
    const zones = await ctx.zones.keyvalZones();
    const out: Record<string, Record<string, string>> = Object.create(null);
    for (const name of zones.keys()) {
      const entries = await ctx.gateway.call('getZone', (s) => s.keyvals.getZone(name, nowMs));
      out[name] = pick(entries, only);
    }
    return out;
  });

  addSpecRoute(app, ctx, 'getHttpKeyvalZone', async (request) => {
    const { zone } = request.params as ZoneParams;
    const { key } = request.query as { key?: string };
    await ctx.zones.keyvalZone(zone);
    const entries = await ctx.gateway.call('getZone', (s) => s.keyvals.getZone(zone, ctx.clock.nowMs()));
    if (key === undefined) return pick(entries, null);
    const entry = Object.hasOwn(entries, key) ? entries[key] : undefined;
    if (!entry) throw new LimitswitchError('KeyvalKeyNotFound');
    return withKey(key, entry.value);
  });

  addSpecRoute(app, ctx, 'postHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs, note } = await writeTarget(ctx, request);
    const zone = info.name;
    const entries = parsePostBody(request.body, info, note.timeMs);
    const result = await ctx.gateway.call('add', (s) =>
      s.keyvals.add(zone, entries, { note, sizeBytes: info.sizeBytes }),
    );
    warn(reply, keyWarnings(info, Object.keys(entries)));
    const changes = Object.keys(entries).map((key) => ({ key, old: null, new: entries[key]!.value }));
    const outcome = { status: 201, revision: result.revision, zone, op: 'add', changes, note, audited: true };
    return answerWrite(ctx, request, reply, outcome, waitMs);
  });

  addSpecRoute(app, ctx, 'patchHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs, note } = await writeTarget(ctx, request);
    const zone = info.name;
    const { key, entry } = parsePatchBody(request.body, info, note.timeMs);
    const result = entry
      ? await ctx.gateway.call('change', (s) =>
          s.keyvals.change(zone, key, entry, { note, sizeBytes: info.sizeBytes }),
        )
      : await ctx.gateway.call('delete', (s) => s.keyvals.delete(zone, key, { note }));
    if (entry) warn(reply, keyWarnings(info, [key]));
    const changes = [{ key, old: result.previous[key] ?? null, new: entry?.value ?? null }];
    const op = entry ? 'change' : 'delete';
    const outcome = { status: 204, revision: result.revision, zone, op, changes, note, audited: true };
    return answerWrite(ctx, request, reply, outcome, waitMs);
  });

  addSpecRoute(app, ctx, 'deleteHttpKeyvalZone', async (request, reply) => {
    const { info, waitMs, note } = await writeTarget(ctx, request);
    const zone = info.name;
    const result = await ctx.gateway.call('empty', (s) => s.keyvals.empty(zone, { note }));
    const changes = Object.keys(result.previous).map((key) => ({
      key,
      old: result.previous[key] ?? null,
      new: null,
    }));
    const outcome = {
      status: 204,
      revision: result.revision,
      zone,
      op: 'empty',
      changes,
      note,
      audited: true,
    };
    return answerWrite(ctx, request, reply, outcome, waitMs);
  });
}

/** A stored write's warnings, one `Warning` field each (on 201/204, and on 202 with `wait=applied`). */
function warn(reply: FastifyReply, warnings: readonly string[]): void {
  const values = warnings.map(warningHeaderValue);
  if (values.length > 0) reply.header(WARNING_HEADER, values.length === 1 ? values[0] : values);
}

async function writeTarget(
  ctx: ControlPlaneContext,
  request: FastifyRequest,
): Promise<{ info: KeyvalZoneInfo; waitMs: number | null; note: AuditNote }> {
  const { zone } = request.params as ZoneParams;
  const waitMs = writeWaitMs(request);
  return { info: await ctx.zones.keyvalZone(zone), waitMs, note: auditNote(ctx, request) };
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
