/**
 * Per limit_req zone: the totals (passed, delayed, rejected and the dry-run twins) and a chart of
 * their rates over the history window, cluster-wide or one per replica.
 */
import { formatRate, rateChart } from './chart.js';
import { h } from './dom.js';
import { LIMIT_REQ_FIELDS } from './rates.js';

/** `view` is `cluster` or `replica`; `nowMs` the right edge of the charts (the last sample). */
export function ratesView(history, view, nowMs) {
  const zones = history.zones();
  if (zones.length === 0) return h('p', { class: 'empty' }, 'No limit_req zones reported yet.');
  const series = view === 'cluster' ? ['cluster'] : history.series().filter((s) => s !== 'cluster');
  return [
    legend(),
    h(
      'div',
      { class: 'zones' },
      zones.map((zone) => zoneCard(history, zone, series, nowMs)),
    ),
  ];
}

function legend() {
  return h(
    'p',
    { class: 'legend' },
    LIMIT_REQ_FIELDS.map((field) => h('span', { class: `key series-${field}` }, field.replaceAll('_', ' '))),
  );
}

function zoneCard(history, zone, series, nowMs) {
  return h(
    'div',
    { class: 'zone-card', 'data-zone': zone },
    h('h3', {}, h('code', {}, zone)),
    series.map((name) => seriesBlock(history, zone, name, nowMs)),
  );
}

function seriesBlock(history, zone, name, nowMs) {
  const totals = history.latest(name, zone) ?? {};
  const rates = history.rates(name, zone);
  const current = (field) => rates[field].at(-1)?.perS ?? 0;
  return h(
    'div',
    { class: 'series-block', 'data-series': name },
    name === 'cluster' ? null : h('h4', {}, name),
    h(
      'table',
      { class: 'totals' },
      h(
        'tr',
        {},
        LIMIT_REQ_FIELDS.map((field) => h('th', {}, field.replaceAll('_', ' '))),
      ),
      h(
        'tr',
        {},
        LIMIT_REQ_FIELDS.map((field) =>
          h(
            'td',
            { class: 'num', 'data-field': field },
            h('span', { class: 'total' }, totals[field] ?? 0),
            h('small', {}, ` ${formatRate(current(field))}/s`),
          ),
        ),
      ),
    ),
    rateChart(rates, nowMs, `${zone} ${name}: requests per second`),
  );
}
