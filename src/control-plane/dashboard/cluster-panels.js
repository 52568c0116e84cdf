/**
 * The cluster's own panels: the replicas (what each runs and how far behind it is), the audit trail
 * and alert automation's holds.
 */
import { serverNowMs } from './api.js';
import { clockTime, duration, h, table } from './dom.js';

/**
 * A replica whose heartbeat stopped cannot reach the store (or has stopped): if it still runs, it
 * keeps enforcing the switches of its last applied revision (fail-static) until the store is back.
 */
function failStatic(replica) {
  if (replica.state === 'gone')
    return `unknown — if running, fail-static at revision ${replica.applied_revision}`;
  if (replica.state === 'diverged') return "no — reloading the store's history";
  return 'no — synced';
}

/**
 * The config column shows the hash that leaves listen addresses out (`config_hash_without_listen`):
 * replicas of one configuration on other ports show the same one, and a different one is real drift.
 * `config_hash` (listen addresses included, so it differs there) is in the tooltip; a replica from
 * before the new field shows only it.
 */
function configHash(replica) {
  const shown = replica.config_hash_without_listen ?? replica.config_hash;
  const title =
    replica.config_hash_without_listen === undefined
      ? replica.config_hash
      : `${replica.config_hash_without_listen} without listen addresses; ${replica.config_hash} with them`;
  return h('code', { title }, shown.slice(0, 12));
}

export function replicasView(cluster) {
  const nowMs = serverNowMs();
  const rows = cluster.replicas.map((r) => {
    const lag = Math.max(0, cluster.revision - r.applied_revision);
    const ageMs = Math.max(0, nowMs - Date.parse(r.last_heartbeat));
    return h(
      'tr',
      { 'data-replica': r.id, class: `state-${r.state}` },
      h('td', {}, h('code', {}, r.id)),
      h('td', {}, h('span', { class: `badge state-${r.state}` }, r.state)),
      h('td', {}, r.version),
      h('td', { 'data-field': 'config' }, configHash(r)),
      h('td', { class: 'num', 'data-field': 'applied_revision' }, r.applied_revision),
      h('td', { class: 'num', 'data-field': 'lag' }, lag),
      h('td', {}, `${duration(ageMs)} ago`),
      h('td', {}, failStatic(r)),
    );
  });
  return [
    h('p', { class: 'meta' }, `store revision ${cluster.revision}`),
    table(
      ['id', 'state', 'version', 'config', 'applied', 'lag', 'last heartbeat', 'fail-static'],
      rows,
      'No replica has reported yet.',
    ),
  ];
}

export function auditView(entries) {
  const rows = entries.map((e) =>
    h(
      'tr',
      {},
      h('td', {}, clockTime(e.time)),
      h('td', {}, e.token_id ?? e.client),
      h('td', {}, h('code', {}, e.zone)),
      h('td', {}, e.key === null ? h('span', { class: 'meta' }, 'whole zone') : h('code', {}, e.key)),
      h('td', {}, change(e.old, e.new)),
      h('td', { class: 'num' }, e.revision),
      h('td', { class: 'reason' }, e.reason ?? ''),
    ),
  );
  return table(
    ['time', 'who', 'zone', 'key', 'change', 'revision', 'reason'],
    rows,
    'No changes recorded yet.',
  );
}

function change(old, now) {
  const text = (value) => (value === null ? '∅' : `"${value}"`);
  return h('code', { class: 'change' }, `${text(old)} → ${text(now)}`);
}

export function automationView(automation) {
  const rules =
    automation.rules.length === 0
      ? 'This control plane runs no --alert-rules; holds of other control planes are shown.'
      : `Rules here: ${automation.rules.join(', ')}.`;
  const rows = automation.holds.map((x) =>
    h(
      'tr',
      { 'data-hold': `${x.zone} ${x.key}` },
      h('td', {}, h('code', {}, x.zone)),
      h('td', {}, h('code', {}, x.key), x.dry_run ? h('span', { class: 'badge' }, 'dry run') : null),
      h('td', {}, h('code', {}, x.value)),
      h('td', {}, x.holders.map((holder) => `${holder.alertname} (${holder.rule})`).join(', ') || '—'),
      h('td', {}, clockTime(x.hold_until)),
      h('td', {}, duration(x.expire)),
      h('td', {}, x.revert ? `${x.revert.action} at ${clockTime(x.revert.at)}` : '—'),
    ),
  );
  return [
    h('p', { class: 'meta' }, rules),
    table(
      ['zone', 'key', 'value', 'held by', 'held at least until', 'TTL left', 'pending revert'],
      rows,
      'No alert holds a switch.',
    ),
  ];
}
