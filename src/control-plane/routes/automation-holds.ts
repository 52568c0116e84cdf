/**
 * `GET /cluster/automation`: what alert automation holds now, from its records in the store (any
 * control plane's, so this one answers even without `--alert-rules`): each switched key, the alerts
 * holding it, until when it is held and when it expires, and a revert waiting for `min_hold`.
 */
import type { FastifyInstance } from 'fastify';
import type { AlertRules } from '../../automation/alert-rules.ts';
import { AutomationLeases } from '../../automation/automation-leases.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

export function automationHoldRoutes(
  app: FastifyInstance,
  ctx: ControlPlaneContext,
  rules: AlertRules | undefined,
): void {
  const leases = new AutomationLeases((op, fn) => ctx.gateway.call(op, fn));
  addSpecRoute(app, ctx, 'getClusterAutomation', async () => {
    const nowMs = ctx.clock.nowMs();
    const iso = (ms: number) => new Date(ms).toISOString();
    const records = await leases.all(nowMs);
    const holds = records
      .sort((a, b) => a.target.zone.localeCompare(b.target.zone) || a.target.key.localeCompare(b.target.key))
      .map(({ target, state }) => ({
        zone: target.zone,
        key: target.key,
        dry_run: target.dryRun,
        value: state.applied,
        holders: Object.values(state.holders).map((h) => ({
          rule: h.rule,
          alertname: h.alertname,
          fingerprint: h.fingerprint,
          since: iso(h.sinceMs),
        })),
        held_since: iso(state.heldSinceMs),
        hold_until: iso(state.holdUntilMs),
        expire: Math.max(0, state.expireAtMs - nowMs),
        revert: state.revert
          ? { at: iso(state.revert.atMs), action: state.revert.onResolve, rule: state.revert.rule }
          : null,
      }));
    return { rules: (rules?.rules ?? []).map((r) => r.name), holds };
  });
}
