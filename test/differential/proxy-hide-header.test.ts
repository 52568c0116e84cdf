/**
 * `proxy_hide_header` and `proxy_pass_header` against nginx: which of a server's answer fields reach
 * the client — nginx's defaults hidden (Server, X-Pad, X-Accel-*), a field the location hides, one it
 * passes that the defaults would hide (the server's own `Server` instead of the proxy's), each list
 * inherited whole unless a level writes its own, the hop-by-hop fields never.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';

/** The fields the origin sends besides Date, Connection and the body's framing. */
const ORIGIN_FIELDS: Readonly<Record<string, string>> = {
  server: 'origin/1',
  'x-powered-by': 'PHP/8',
  'x-pad': 'avoid browser bug',
  'x-accel-buffering': 'no',
  'x-debug': 'on',
};

const http = (upstreamPort: number) => (port: number) =>
  `
    server {
        listen 127.0.0.1:${port};
        proxy_hide_header X-Debug;
        location /default/ { proxy_pass http://127.0.0.1:${upstreamPort}; }
        location /hide/ { proxy_hide_header x-powered-by; proxy_pass http://127.0.0.1:${upstreamPort}; }
        location /pass/ {
            proxy_pass_header X-Pad;
            proxy_pass_header x-accel-buffering;
            proxy_pass_header Server;
            proxy_pass_header Connection;
            proxy_pass http://127.0.0.1:${upstreamPort};
        }
        location /pass-hidden/ {
            proxy_hide_header X-Pad;
            proxy_pass_header X-Pad;
            proxy_pass http://127.0.0.1:${upstreamPort};
        }
    }
`;

describe('proxy_hide_header and proxy_pass_header: the replica relays the fields nginx relays', () => {
  let upstream: TestUpstream;
  let both: SideBySide;

  before(async () => {
    upstream = await startUpstream((_req, res) => {
      for (const [name, value] of Object.entries(ORIGIN_FIELDS)) res.setHeader(name, value);
      res.end('origin\n');
    });
    both = await startSideBySide(http(upstream.port));
  });

  after(async () => {
    await Promise.all([both?.stop(), upstream?.close()]);
  });

  /** The origin's fields the client got (`server` only when it is the origin's), sorted. */
  async function relayed(port: number, path: string): Promise<string[]> {
    const res = await request(`http://127.0.0.1:${port}${path}`);
    await res.body.text();
    return Object.entries(res.headers)
      .filter(([name, value]) => name in ORIGIN_FIELDS && (name !== 'server' || value === 'origin/1'))
      .map(([name, value]) => `${name}: ${String(value)}`)
      .sort();
  }

  test('the fields each location relays', async () => {
    for (const path of ['/default/', '/hide/', '/pass/', '/pass-hidden/']) {
      const fromNginx = await relayed(both.nginxPort, path);
      assert.deepEqual(await relayed(both.replicaPort, path), fromNginx, path);
    }
    // what nginx does, so that the comparison above is about something
    assert.deepEqual(await relayed(both.nginxPort, '/default/'), ['x-powered-by: PHP/8']);
    assert.deepEqual(await relayed(both.nginxPort, '/pass/'), [
      'server: origin/1',
      'x-accel-buffering: no',
      'x-pad: avoid browser bug',
      'x-powered-by: PHP/8',
    ]);
  });
});
