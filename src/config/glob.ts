/**
 * The subset of glob(3) that nginx's `include` uses: `*`, `?` and `[…]` within path segments, results
 * sorted, no match is not an error. Like glob(3), wildcards do not match a leading dot.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** True when nginx would treat the path as a pattern (`ngx_strpbrk(name, "*?[")`). */
export function hasGlobMagic(path: string): boolean {
  return /[*?[]/.test(path);
}

/** Expands an absolute pattern to the existing paths it names, in byte order. */
export function expandGlob(pattern: string): string[] {
  const segments = pattern.split('/');
  let paths = [segments[0] === '' ? '/' : segments[0]!];
  for (const segment of segments.slice(1)) {
    if (segment === '') continue;
    const next: string[] = [];
    for (const dir of paths) {
      if (!hasGlobMagic(segment)) {
        next.push(join(dir, segment));
        continue;
      }
      const matcher = segmentMatcher(segment);
      for (const entry of listDir(dir)) if (matcher.test(entry)) next.push(join(dir, entry));
    }
    paths = next;
  }
  return paths.filter(exists).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One path segment as an anchored RegExp. */
function segmentMatcher(segment: string): RegExp {
  let source = segment.startsWith('.') ? '' : '(?!\\.)';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i]!;
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else if (ch === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end === -1) {
        source += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      source += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}
