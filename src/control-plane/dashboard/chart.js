/**
 * A small rate chart: one line per field over the history window in a hand-drawn SVG plot, a shared
 * y-axis from zero to the peak. The labels (the peak above the plot, the window's ends below it) are
 * HTML beside the SVG, not SVG text: the plot stretches to its card's width, and text inside it would
 * grow with it and sit under the lines. Colours come from the style sheet (`.series-<field>`), so the
 * chart has no inline styles.
 */
import { h, svg } from './dom.js';
import { WINDOW_MS } from './rates.js';

/** The plot's own coordinates; it is stretched to the card's width at a fixed height (see the CSS). */
const WIDTH = 320;
const HEIGHT = 60;
/** Room above the peak so a line at the top stays clear of the frame. */
const PAD_TOP = 4;

/**
 * `rates` is field → points (`{ atMs, perS }`); `nowMs` is the right edge. The SVG carries
 * `data-peak-per-s` (the highest rate drawn), which tests and people can read. A field that was zero
 * throughout the window draws no line: an idle zone shows an empty plot, not a line along its floor
 * in the colour of the last field drawn (rejected's red).
 */
export function rateChart(rates, nowMs, label) {
  const points = Object.values(rates).flat();
  const peak = points.reduce((max, p) => Math.max(max, p.perS), 0);
  const top = niceCeiling(peak);
  const x = (atMs) => ((atMs - (nowMs - WINDOW_MS)) / WINDOW_MS) * WIDTH;
  const y = (perS) => HEIGHT - (perS / top) * (HEIGHT - PAD_TOP);
  const lines = Object.entries(rates)
    .filter(([, series]) => series.some((p) => p.perS > 0))
    .map(([field, series]) =>
      svg('polyline', {
        class: `series series-${field}`,
        'data-field': field,
        points: series.map((p) => `${x(p.atMs).toFixed(1)},${y(p.perS).toFixed(1)}`).join(' '),
      }),
    );
  return h(
    'div',
    { class: 'rate-chart' },
    h('div', { class: 'axis' }, h('span', { class: 'scale' }, `${formatRate(top)}/s`)),
    svg(
      'svg',
      {
        class: 'chart',
        viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': label,
        'data-peak-per-s': peak.toFixed(2),
      },
      svg('rect', { class: 'frame', x: 0, y: 0, width: WIDTH, height: HEIGHT }),
      svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: y(top / 2), y2: y(top / 2) }),
      lines,
    ),
    h(
      'div',
      { class: 'axis' },
      h('span', { class: 'scale' }, `−${WINDOW_MS / 60_000} min`),
      h('span', { class: 'scale' }, 'now'),
    ),
  );
}

/** 1, 2, 5 × 10ⁿ at or above `value` (at least 1), so the axis reads well. */
function niceCeiling(value) {
  if (value <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

export function formatRate(perS) {
  return perS >= 10 ? String(Math.round(perS)) : perS.toFixed(1).replace(/\.0$/, '');
}
