/**
 * A small rate chart drawn by hand in SVG: one line per field over the history window, a shared
 * y-axis from zero to the peak, the peak written in the corner. Colours come from the style sheet
 * (`.series-<field>`), so the chart has no inline styles.
 */
import { svg } from './dom.js';
import { WINDOW_MS } from './rates.js';

const WIDTH = 320;
const HEIGHT = 72;
const PAD_TOP = 12;

/**
 * `rates` is field → points (`{ atMs, perS }`); `nowMs` is the right edge. The element carries
 * `data-peak-per-s` (the highest rate drawn), which tests and people can read.
 */
export function rateChart(rates, nowMs, label) {
  const points = Object.values(rates).flat();
  const peak = points.reduce((max, p) => Math.max(max, p.perS), 0);
  const top = niceCeiling(peak);
  const x = (atMs) => ((atMs - (nowMs - WINDOW_MS)) / WINDOW_MS) * WIDTH;
  const y = (perS) => HEIGHT - (perS / top) * (HEIGHT - PAD_TOP);
  const lines = Object.entries(rates)
    .filter(([, series]) => series.length > 0)
    .map(([field, series]) =>
      svg('polyline', {
        class: `series series-${field}`,
        'data-field': field,
        points: series.map((p) => `${x(p.atMs).toFixed(1)},${y(p.perS).toFixed(1)}`).join(' '),
      }),
    );
  return svg(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-label': label,
      'data-peak-per-s': peak.toFixed(2),
    },
    svg('rect', { class: 'frame', x: 0, y: 0, width: WIDTH, height: HEIGHT }),
    svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: y(top / 2), y2: y(top / 2) }),
    lines,
    svg('text', { class: 'scale', x: 4, y: 10 }, `${formatRate(top)}/s`),
    svg('text', { class: 'scale', x: WIDTH - 4, y: HEIGHT - 4, 'text-anchor': 'end' }, 'now'),
    svg('text', { class: 'scale', x: 4, y: HEIGHT - 4 }, `−${WINDOW_MS / 60_000} min`),
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
