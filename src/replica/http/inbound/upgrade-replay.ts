/**
 * An upgrade request to a location that does not tunnel upgrades is, for nginx, a plain request: the
 * upstream never sees `Upgrade`. Node's parser has already stopped at it (the server listens for
 * 'upgrade'), so the request head is written back in front of the unread bytes, without the `upgrade`
 * token of `Connection`, and the connection handed to the server again: the request then takes the
 * ordinary path in full (the hook, its body, keep-alive) and is decided there, once.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** `Connection` without its `upgrade` token; null when nothing is left. */
function withoutUpgradeToken(value: string): string | null {
  const kept = value
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '' && token.toLowerCase() !== 'upgrade');
  return kept.length === 0 ? null : kept.join(', ');
}

/** The request head as received, minus the upgrade request (latin1, as Node read it). */
export function plainRequestHead(req: IncomingMessage): string {
  let head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    let value: string | null = raw[i + 1]!;
    if (name.length === 10 && name.toLowerCase() === 'connection') value = withoutUpgradeToken(value);
    if (value !== null) head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

export function replayWithoutUpgrade(
  server: Server,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): void {
  const text = Buffer.from(plainRequestHead(req), 'latin1');
  socket.unshift(head.length === 0 ? text : Buffer.concat([text, head]));
  server.emit('connection', socket);
}
