/**
 * Warnings on a keyval write that is stored as asked but will not do what it likely means, sent as
 * HTTP `Warning: 299 - "text"` headers: the form the Kubernetes API server uses, which kubectl and
 * client-go print. The status and the (empty) body stay NGINX Plus's. Pure.
 */
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';

export const WARNING_HEADER = 'warning';

/**
 * The keys written that can never match: in a `type=prefix` zone, a key that does not start with `/`
 * is never a prefix of a `$uri` (nginx stores it all the same, and so do we).
 */
export function keyWarnings(zone: KeyvalZoneInfo, keys: readonly string[]): string[] {
  if (zone.type !== 'prefix') return [];
  return keys
    .filter((key) => !key.startsWith('/'))
    .map(
      (key) =>
        `key ${JSON.stringify(key)} of type=prefix keyval zone ${JSON.stringify(zone.name)} does not start with "/": it can never match a $uri, which always does`,
    );
}

/**
 * One `Warning` field value: code 299 (a persistent warning), no agent (`-`), the text as a
 * quoted-string. The text's UTF-8 bytes go on the wire as they are (a header string is written as
 * latin1, one byte a character), as the Kubernetes API server sends them; control characters cannot
 * occur, the key being JSON-quoted in the text.
 */
export function warningHeaderValue(text: string): string {
  const quoted = `"${text.replace(/["\\]/g, '\\$&')}"`;
  return `299 - ${Buffer.from(quoted, 'utf8').toString('latin1')}`;
}
