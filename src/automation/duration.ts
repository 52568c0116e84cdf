/**
 * Durations in the alert rules file use Prometheus' syntax (the file sits next to PrometheusRules and
 * Alertmanager configs, whose users write `30s`, `5m`, `1h30m`): units `y w d h m s ms`, each at most
 * once, largest first, no spaces. `0` alone means zero.
 */

const UNITS: readonly (readonly [string, number])[] = [
  ['y', 365 * 24 * 3600_000],
  ['w', 7 * 24 * 3600_000],
  ['d', 24 * 3600_000],
  ['h', 3600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

const PATTERN =
  /^(?:([0-9]+)y)?(?:([0-9]+)w)?(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?(?:([0-9]+)ms)?$/;

/** `1h30m` → 5400000; `null` when the text is not a Prometheus duration. */
export function parseDurationMs(text: string): number | null {
  if (text === '0') return 0;
  if (text === '') return null;
  const match = PATTERN.exec(text);
  if (!match) return null;
  let totalMs = 0;
  for (const [index, [, unitMs]] of UNITS.entries()) {
    const digits = match[index + 1];
    if (digits !== undefined) totalMs += Number(digits) * unitMs;
  }
  return Number.isSafeInteger(totalMs) ? totalMs : null;
}

/** 5400000 → `1h30m`; 0 → `0s`. For messages and docs. */
export function formatDurationMs(totalMs: number): string {
  if (totalMs === 0) return '0s';
  let rest = totalMs;
  let text = '';
  for (const [unit, unitMs] of UNITS) {
    const count = Math.floor(rest / unitMs);
    if (count > 0) {
      text += `${count}${unit}`;
      rest -= count * unitMs;
    }
  }
  return text;
}
