/**
 * `allow unix:` / `deny unix:` against real nginx: one configuration served by nginx and by a replica
 * process, the same requests over TCP to both, the same status — a `unix:` rule does not match an IP
 * client (it falls through to the next rule, or to no match: allowed), `all` does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const http = (port: number) => `
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location /allow_all { allow all; return 200 "in\\n"; }
        location /allow_unix { allow unix:; return 200 "in\\n"; }
        location /deny_all { deny all; return 200 "in\\n"; }
        location /deny_unix { deny unix:; return 200 "in\\n"; }
        location /allow_unix_deny_all { allow unix:; deny all; return 200 "in\\n"; }
        location /deny_unix_allow_ip { deny unix:; allow 127.0.0.1; deny all; return 200 "in\\n"; }
        location /static_deny_unix { deny unix:; }
    }
`;

const PATHS = [
  '/allow_all',
  '/allow_unix',
  '/deny_all',
  '/deny_unix',
  '/allow_unix_deny_all',
  '/deny_unix_allow_ip',
  '/static_deny_unix',
];

describe('allow/deny unix: for TCP clients: the replica answers as nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(http);
  });

  after(async () => {
    await both?.stop();
  });

  async function send(port: number, path: string): Promise<string> {
    const res = await request(`http://127.0.0.1:${port}${path}`);
    const body = await res.body.text();
    const text = body.includes('<html>')
      ? `(page ${/<title>([^<]*)</.exec(body)?.[1]})`
      : JSON.stringify(body);
    return `${res.statusCode} ${text}`;
  }

  test('statuses and bodies', async () => {
    for (const path of PATHS) {
      const fromNginx = await send(both.nginxPort, path);
      assert.equal(await send(both.replicaPort, path), fromNginx, path);
    }
  });
});
