/**
 * nginx's log times in the local zone: `$time_local` (ngx_cached_http_log_time, also the `combined`
 * lines of `--access-log`) and `$time_iso8601` (ngx_cached_http_log_iso8601).
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function two(n: number): string {
  return String(n).padStart(2, '0');
}

/** The local zone's offset as nginx prints it: `+0100` (`separator`: `+01:00`). */
function zone(time: Date, separator: string): string {
  const offset = -time.getTimezoneOffset();
  const abs = Math.abs(offset);
  return `${offset >= 0 ? '+' : '-'}${two(Math.floor(abs / 60))}${separator}${two(abs % 60)}`;
}

/** `05/Dec/2026:10:50:00 +0000`. */
export function timeLocal(time: Date): string {
  const day = `${two(time.getDate())}/${MONTHS[time.getMonth()]}/${time.getFullYear()}`;
  return `${day}:${two(time.getHours())}:${two(time.getMinutes())}:${two(time.getSeconds())} ${zone(time, '')}`;
}

/** `2026-12-05T10:50:00+00:00`. */
export function timeIso8601(time: Date): string {
  const day = `${time.getFullYear()}-${two(time.getMonth() + 1)}-${two(time.getDate())}`;
  return `${day}T${two(time.getHours())}:${two(time.getMinutes())}:${two(time.getSeconds())}${zone(time, ':')}`;
}
