/**
 * ngx_parse_http_time: a date in `If-Modified-Since`, `If-Unmodified-Since` or `If-Range` read as
 * nginx reads it — RFC 822 (`Tue, 10 Nov 2002 23:50:13`), RFC 850 (`Tuesday, 10-Dec-02 23:50:13`)
 * or asctime (`Tue Dec 10 23:50:13 2002`); what follows the time is not looked at.
 */

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** -1: not a date nginx reads (NGX_ERROR). */
export const NO_TIME = -1;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

function digits(s: string, at: number, count: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) {
    const c = s[at + i];
    if (!isDigit(c)) return -1;
    n = n * 10 + (c!.charCodeAt(0) - 48);
  }
  return n;
}

function monthAt(s: string, p: number): number {
  switch (s[p]) {
    case 'J':
      return s[p + 1] === 'a' ? 0 : s[p + 2] === 'n' ? 5 : 6;
    case 'F':
      return 1;
    case 'M':
      return s[p + 2] === 'r' ? 2 : 4;
    case 'A':
      return s[p + 1] === 'p' ? 3 : 7;
    case 'S':
      return 8;
    case 'O':
      return 9;
    case 'N':
      return 10;
    case 'D':
      return 11;
    default:
      return -1;
  }
}

/** Seconds since the epoch, or `NO_TIME`. */
export function parseHttpTime(s: string): number {
  const end = s.length;
  let fmt: 'none' | 'rfc822' | 'rfc850' | 'isoc' = 'none';
  let p = 0;
  for (; p < end; p++) {
    if (s[p] === ',') break;
    if (s[p] === ' ') {
      fmt = 'isoc';
      break;
    }
  }
  for (p++; p < end; p++) if (s[p] !== ' ') break;
  if (end - p < 18) return NO_TIME;
  let day = 0;
  let year = 0;
  if (fmt !== 'isoc') {
    day = digits(s, p, 2);
    if (day < 0) return NO_TIME;
    p += 2;
    if (s[p] === ' ') {
      if (end - p < 18) return NO_TIME;
      fmt = 'rfc822';
    } else if (s[p] === '-') fmt = 'rfc850';
    else return NO_TIME;
    p++;
  }
  let month = monthAt(s, p);
  if (month < 0) return NO_TIME;
  p += 3;
  if ((fmt === 'rfc822' && s[p] !== ' ') || (fmt === 'rfc850' && s[p] !== '-')) return NO_TIME;
  p++;
  if (fmt === 'rfc822') {
    year = digits(s, p, 4);
    if (year < 0) return NO_TIME;
    p += 4;
  } else if (fmt === 'rfc850') {
    year = digits(s, p, 2);
    if (year < 0) return NO_TIME;
    year += year < 70 ? 2000 : 1900;
    p += 2;
  }
  if (fmt === 'isoc') {
    if (s[p] === ' ') p++;
    if (!isDigit(s[p])) return NO_TIME;
    day = digits(s, p++, 1);
    if (s[p] !== ' ') {
      if (!isDigit(s[p])) return NO_TIME;
      day = day * 10 + digits(s, p++, 1);
    }
    if (end - p < 14) return NO_TIME;
  }
  if (s[p++] !== ' ') return NO_TIME;
  const hour = digits(s, p, 2);
  if (hour < 0) return NO_TIME;
  p += 2;
  if (s[p++] !== ':') return NO_TIME;
  const min = digits(s, p, 2);
  if (min < 0) return NO_TIME;
  p += 2;
  if (s[p++] !== ':') return NO_TIME;
  const sec = digits(s, p, 2);
  if (sec < 0) return NO_TIME;
  if (fmt === 'isoc') {
    p += 2;
    if (s[p++] !== ' ') return NO_TIME;
    year = digits(s, p, 4);
    if (year < 0) return NO_TIME;
  }
  if (hour > 23 || min > 59 || sec > 59) return NO_TIME;
  if (day === 29 && month === 1) {
    if (year & 3 || (year % 100 === 0 && year % 400 !== 0)) return NO_TIME;
  } else if (day > MONTH_DAYS[month]!) return NO_TIME;
  // Gauss' formula, the year starting on March 1 (months from 1)
  if (--month <= 0) {
    month += 12;
    year -= 1;
  }
  const days =
    365 * year +
    Math.floor(year / 4) -
    Math.floor(year / 100) +
    Math.floor(year / 400) +
    Math.floor((367 * month) / 12) -
    30 +
    day -
    1 -
    719527 +
    31 +
    28;
  return days * 86400 + hour * 3600 + min * 60 + sec;
}
