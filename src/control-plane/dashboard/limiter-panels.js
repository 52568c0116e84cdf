/**
 * The other limiters, one panel each: limit_conn zones (cluster-wide and per replica), upstream
 * queues, priority levels and cluster-wide (synced) limit_req zones. Each reads its existing route.
 */
import { h, table } from './dom.js';

const LIMIT_CONN_FIELDS = ['passed', 'rejected', 'rejected_dry_run'];

/** `/limit_conns` and `/limit_conns?by=replica`. */
export function limitConnsView(totals, byReplica) {
  const rows = [];
  for (const zone of Object.keys(totals).sort()) {
    rows.push(countRow(zone, 'cluster', totals[zone]));
    for (const replica of Object.keys(byReplica).sort()) {
      if (byReplica[replica][zone]) rows.push(countRow(zone, replica, byReplica[replica][zone]));
    }
  }
  return table(['zone', 'where', ...LIMIT_CONN_FIELDS], rows, 'No limit_conn zones.');
}

function countRow(zone, where, counters) {
  return h(
    'tr',
    { 'data-limit-conn': `${zone} ${where}`, class: where === 'cluster' ? 'total' : 'part' },
    h('td', {}, h('code', {}, zone)),
    h('td', {}, where),
    LIMIT_CONN_FIELDS.map((field) => h('td', { class: 'num', 'data-field': field }, counters[field] ?? 0)),
  );
}

/** `/api/9/http/upstreams`: servers' load and, where a block has one, its queue. */
export function upstreamsView(upstreams) {
  const rows = Object.keys(upstreams)
    .sort()
    .map((name) => {
      const u = upstreams[name];
      const active = u.peers.reduce((sum, p) => sum + p.active, 0);
      const down = u.peers.filter((p) => p.state !== 'up').length;
      const q = u.queue;
      return h(
        'tr',
        { 'data-upstream': name },
        h('td', {}, h('code', {}, name)),
        h('td', { class: 'num' }, u.peers.length, down > 0 ? ` (${down} unavailable)` : ''),
        h('td', { class: 'num' }, active),
        h('td', { class: 'num' }, q ? `${q.size} / ${q.max_size}` : '—'),
        h('td', { class: 'num' }, q ? q.served : '—'),
        h('td', { class: 'num' }, q ? q.overflows + q.timed_out : '—'),
      );
    });
  return table(
    ['upstream', 'servers', 'active', 'queue now', 'served after waiting', 'turned away'],
    rows,
    'No upstream blocks.',
  );
}

/** `/api/9/http/priority_levels`. */
export function priorityLevelsView(levels) {
  const rows = Object.keys(levels)
    .sort()
    .map((name) => {
      const level = levels[name];
      const rejected = Object.values(level.rejected_requests ?? {}).reduce((sum, n) => sum + n, 0);
      return h(
        'tr',
        { 'data-priority-level': name },
        h('td', {}, h('code', {}, name)),
        h('td', {}, level.type),
        h('td', { class: 'num' }, `${level.current_executing_requests} / ${level.nominal_limit_seats}`),
        h('td', { class: 'num' }, level.current_inqueue_requests),
        h('td', { class: 'num' }, level.dispatched_requests),
        h('td', { class: 'num' }, rejected),
        h(
          'td',
          {},
          (level.flows ?? [])
            .slice(0, 3)
            .map((f) => `${f.flow} (${f.waiting} waiting)`)
            .join(', '),
        ),
      );
    });
  return table(
    ['level', 'type', 'executing / seats', 'waiting', 'dispatched', 'rejected', 'busiest flows'],
    rows,
    'No priority levels.',
  );
}

/** `/api/9/stream/zone_sync` (`{}` when no zone is synced). */
export function zoneSyncView(sync) {
  const zones = sync.zones ?? {};
  const rows = Object.keys(zones)
    .sort()
    .map((name) => {
      const z = zones[name];
      return h(
        'tr',
        { 'data-synced-zone': name },
        h('td', {}, h('code', {}, name)),
        h('td', {}, h('span', { class: `badge mode-${z.mode}` }, z.mode)),
        h('td', { class: 'num' }, `${z.synced_replicas} / ${z.live_replicas}`),
        h('td', { class: 'num' }, z.records_total),
        h('td', { class: 'num' }, z.records_pending),
        h('td', { class: 'num' }, z.last_sync_age_ms === null ? '—' : `${z.last_sync_age_ms} ms`),
        h('td', { class: 'num' }, z.round_trip_ms === null ? '—' : `${z.round_trip_ms} ms`),
      );
    });
  return table(
    ['zone', 'mode', 'synced replicas', 'keys', 'pending', 'last sync', 'round trip'],
    rows,
    'No cluster-wide (sync) limit_req zones.',
  );
}
