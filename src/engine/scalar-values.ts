/**
 * nginx's scalar parsers: ngx_atoi, ngx_parse_size, ngx_parse_offset, ngx_parse_time (src/core/ngx_parse.c) and the
 * on/off flag. They return `null` where nginx returns NGX_ERROR; callers add nginx's message.
 * Values beyond Number.MAX_SAFE_INTEGER are treated as overflow (nginx's limit is 2^63 - 1).
 */

/** A non-negative decimal integer, digits only (no sign, no spaces). */
export function atoi(text: string): number | null {
  if (!/^[0-9]+$/.test(text)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

const SCALE: Readonly<Record<string, number>> = { k: 1024, K: 1024, m: 1024 ** 2, M: 1024 ** 2 };
const OFFSET_SCALE: Readonly<Record<string, number>> = { ...SCALE, g: 1024 ** 3, G: 1024 ** 3 };

function scaled(text: string, scales: Readonly<Record<string, number>>): number | null {
  const scale = scales[text.at(-1) ?? ''];
  const value = atoi(scale === undefined ? text : text.slice(0, -1));
  if (value === null) return null;
  const bytes = value * (scale ?? 1);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** `1024`, `64k`/`64K`, `1m`/`1M` → bytes (ngx_parse_size). There is no `g` suffix. */
export function parseSize(text: string): number | null {
  return scaled(text, SCALE);
}

/** ngx_parse_offset: as `parseSize`, and `g`/`G` too (`client_max_body_size 1g`). */
export function parseOffset(text: string): number | null {
  return scaled(text, OFFSET_SCALE);
}

const MS_PER: Record<string, number> = {
  y: 365 * 24 * 3600 * 1000,
  M: 30 * 24 * 3600 * 1000,
  w: 7 * 24 * 3600 * 1000,
  d: 24 * 3600 * 1000,
  h: 3600 * 1000,
  m: 60 * 1000,
  s: 1000,
  ms: 1,
};

/** Unit order: each unit at most once, larger first; a bare trailing number is seconds. */
const STEP: Record<string, number> = { y: 1, M: 2, w: 3, d: 4, h: 5, m: 6, s: 7, ms: 8 };

/**
 * nginx time syntax in milliseconds (ngx_parse_time with is_sec = 0): `500ms`, `30s`, `1h30m`,
 * `1d 12h`, `90` (seconds). As in nginx, `y` and `M` are not accepted where milliseconds are meant.
 */
export function parseTimeMs(text: string): number | null {
  return parseTime(text, false);
}

/** ngx_parse_time with is_sec = 1 (`expires 1y`): whole seconds, `y` and `M` allowed, `ms` refused. */
export function parseTimeS(text: string): number | null {
  const ms = parseTime(text, true);
  return ms === null ? null : ms / 1000;
}

function parseTime(text: string, isSec: boolean): number | null {
  let step = isSec ? 0 : STEP.M!; // is_sec = 0 starts after months
  let total = 0;
  let value = 0;
  let valid = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch >= '0' && ch <= '9') {
      value = value * 10 + (ch.charCodeAt(0) - 48);
      if (!Number.isSafeInteger(value)) return null;
      valid = true;
      i++;
      continue;
    }
    let unit: string;
    if (ch === 'm' && text[i + 1] === 's') {
      if (isSec) return null;
      unit = 'ms';
      i += 2;
    } else if (ch === ' ') {
      // a space ends the list: what follows is a bare number of seconds
      if (step >= STEP.s!) return null;
      unit = 's';
      step = STEP.ms!;
      i++;
    } else {
      unit = ch;
      i++;
    }
    const unitStep = STEP[unit];
    if (ch !== ' ') {
      if (unitStep === undefined || unitStep <= step) return null;
      step = unitStep;
    }
    total += value * MS_PER[unit]!;
    if (!Number.isSafeInteger(total)) return null;
    value = 0;
    while (text[i] === ' ') i++;
  }
  if (!valid) return null;
  total += value * 1000;
  return Number.isSafeInteger(total) ? total : null;
}

/** `on` → true, `off` → false (case-insensitive, like ngx_conf_set_flag_slot), anything else → null. */
export function parseFlag(text: string): boolean | null {
  const lower = text.toLowerCase();
  return lower === 'on' ? true : lower === 'off' ? false : null;
}
