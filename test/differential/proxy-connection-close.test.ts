/**
 * `proxy_set_header Connection close` against nginx: a request whose Connection line says `close`
 * is its upstream connection's last — the server closes it after the answer, and the next request
 * goes on a new one (upstream_keepalive.t's `/?close`); an empty value, or another token, keeps it.
 * Both proxies send to one recording server, which numbers the connections it is given.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { RecordingUpstream } from '../helpers/recording-upstream.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const http = (upstreamPort: number) => (port: number) =>
  `
    upstream kept {
        server 127.0.0.1:${upstreamPort};
        keepalive 1;
    }
    server {
        listen 127.0.0.1:${port};
        proxy_http_version 1.1;
        proxy_set_header Connection $arg_c;
        location / { proxy_pass http://kept; }
    }
`;

const SEQUENCE = ['/', '/', '/?c=close', '/', '/?c=Keep-Alive', '/?c=Close', '/'];

describe('proxy_set_header Connection close: the replica closes its upstream connection as nginx', () => {
  let upstream: RecordingUpstream;
  let both: SideBySide;

  before(async () => {
    upstream = await RecordingUpstream.start();
    both = await startSideBySide(http(upstream.port));
  });

  after(async () => {
    await Promise.all([both?.stop(), upstream?.close()]);
  });

  /** The upstream connections the sequence came on, numbered from 0 in order of first use. */
  async function connections(port: number): Promise<number[]> {
    const first = upstream.requests.length;
    for (const path of SEQUENCE) {
      const res = await request(`http://127.0.0.1:${port}${path}`);
      assert.equal(res.statusCode, 200, path);
      await res.body.text();
    }
    const seen = upstream.requests.slice(first).map((r) => r.connection);
    return seen.map((c) => [...new Set(seen)].indexOf(c));
  }

  test('which requests leave on a new connection', async () => {
    const fromNginx = await connections(both.nginxPort);
    assert.deepEqual(fromNginx, [0, 0, 0, 1, 1, 1, 2]);
    assert.deepEqual(await connections(both.replicaPort), fromNginx);
  });
});
