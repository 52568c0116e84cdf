/**
 * `GET /cluster/keyvals`: every keyval zone with what the NGINX Plus read leaves out — each key's
 * expiry and who set its value (the newest audit entry that wrote it), and the zone's type and
 * `timeout=` (whether a write may carry an `expire`). The dashboard's switches table reads it.
 */
import type { FastifyInstance } from 'fastify';
import type { AuditEntry } from '../../store/audit-trail.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

/** How far back the audit trail is searched for a key's last writer (the spec's `/audit` bound). */
const AUDIT_DEPTH = 1000;

interface LastChange {
  time: string;
  token_id: string | null;
  client: string;
  reason: string | null;
  revision: number;
}

interface SwitchView {
  value: string;
  /** Milliseconds left, as NGINX Plus's `expire`; `null` never expires. */
  expire: number | null;
  last_change: LastChange | null;
}

export function switchRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getClusterKeyvals', async () => {
    const nowMs = ctx.clock.nowMs();
    const zones = await ctx.zones.keyvalZones();
    const audit = await ctx.gateway.call('audit', (s) => s.audit.recent(AUDIT_DEPTH));
    const out: Record<string, unknown> = Object.create(null);
    for (const [name, info] of zones) {
      const entries = await ctx.gateway.call('getZone', (s) => s.keyvals.getZone(name, nowMs));
      const keys: Record<string, SwitchView> = Object.create(null);
      for (const key of Object.keys(entries).sort()) {
        const entry = entries[key]!;
        keys[key] = {
          value: entry.value,
          expire: entry.expireAtMs === null ? null : Math.max(0, entry.expireAtMs - nowMs),
          last_change: lastChange(audit, name, key, entry.value),
        };
      }
      out[name] = { type: info.type, timeout_ms: info.timeoutMs, keys };
    }
    return out;
  });
}

/** The newest entry that wrote `value` to the key (dry runs that would have written another are skipped). */
function lastChange(
  audit: readonly AuditEntry[],
  zone: string,
  key: string,
  value: string,
): LastChange | null {
  const entry = audit.find((e) => e.zone === zone && e.key === key && e.new === value);
  if (!entry) return null;
  return {
    time: new Date(entry.timeMs).toISOString(),
    token_id: entry.tokenId,
    client: entry.client,
    reason: entry.reason,
    revision: entry.revision,
  };
}
