/**
 * The switches: every keyval zone and its keys, with each key's expiry, who set it last (from the
 * audit trail) and whether alert automation holds it; a toggle per key (`1` ↔ `0`), a delete, and a
 * form to set any key. Every change goes through the confirmation dialog.
 */
import { duration, h, table } from './dom.js';

/** A value that switches a limit on, in the cafe example's maps (`1`); anything else reads as off. */
const ON = '1';
const OFF = '0';

/** The section body for `/cluster/keyvals` (`zones`) and `/cluster/automation` (`automation`). */
export function switchesView(zones, automation, dialog) {
  const names = Object.keys(zones).sort();
  if (names.length === 0)
    return h('p', { class: 'empty' }, 'No keyval zones: no replica or -c file has declared one.');
  const held = new Map(
    (automation?.holds ?? []).filter((x) => !x.dry_run).map((x) => [`${x.zone}\n${x.key}`, x]),
  );
  return names.map((name) => zoneView(name, zones[name], held, dialog));
}

function zoneView(name, zone, held, dialog) {
  const keys = Object.keys(zone.keys);
  const timeout = zone.timeout_ms === null ? 'no timeout' : `timeout ${duration(zone.timeout_ms)}`;
  const rows = keys.map((key) => keyRow(name, zone, key, held.get(`${name}\n${key}`), dialog));
  return h(
    'div',
    { class: 'zone', 'data-keyval-zone': name },
    h('h3', {}, name, ' ', h('span', { class: 'meta' }, `type=${zone.type}, ${timeout}`)),
    table(
      ['key', 'value', '', 'expires in', 'set by', ''],
      rows,
      'No keys: every switch of this zone is off.',
    ),
    setForm(name, zone, dialog),
  );
}

function keyRow(zoneName, zone, key, hold, dialog) {
  const entry = zone.keys[key];
  const on = entry.value === ON;
  const change = (value) => () =>
    dialog.open({ zone: zoneName, key, value, current: entry.value, zoneInfo: zone });
  return h(
    'tr',
    { 'data-switch': `${zoneName} ${key}`, class: on ? 'on' : 'off' },
    h('td', {}, h('code', {}, key)),
    h('td', { class: 'value' }, h('code', {}, entry.value)),
    h(
      'td',
      {},
      h(
        'button',
        { class: 'toggle', type: 'button', onclick: change(on ? OFF : ON) },
        on ? 'turn off' : 'turn on',
      ),
    ),
    h('td', {}, entry.expire === null ? 'never' : duration(entry.expire)),
    h('td', { class: 'who' }, who(entry.last_change, hold)),
    h('td', {}, h('button', { class: 'delete', type: 'button', onclick: change(null) }, 'delete')),
  );
}

function who(change, hold) {
  const parts = [];
  if (hold) {
    const alerts = hold.holders.map((x) => x.alertname).join(', ') || 'revert pending';
    parts.push(h('span', { class: 'badge held' }, `held by ${alerts}`));
  }
  if (!change) return [...parts, h('span', { class: 'meta' }, 'not in the recent audit trail')];
  const by = change.token_id ?? change.client;
  const when = new Date(change.time).toLocaleTimeString();
  return [
    ...parts,
    `${by} at ${when}`,
    change.reason ? h('span', { class: 'meta' }, ` — ${change.reason}`) : null,
  ];
}

/** Set any key of the zone (new keys are added, existing ones changed). */
function setForm(zoneName, zone, dialog) {
  const key = h('input', {
    name: 'key',
    placeholder: zone.type === 'ip' ? '10.0.0.0/8' : 'key',
    required: true,
  });
  const value = h('input', { name: 'value', value: ON, required: true, size: 6 });
  const submit = (event) => {
    event.preventDefault();
    const current = Object.hasOwn(zone.keys, key.value) ? zone.keys[key.value].value : null;
    dialog.open({ zone: zoneName, key: key.value, value: value.value, current, zoneInfo: zone });
  };
  return h(
    'form',
    { class: 'set-key', onsubmit: submit },
    h('label', {}, 'key ', key),
    h('label', {}, 'value ', value),
    h('button', { type: 'submit' }, 'set…'),
  );
}
