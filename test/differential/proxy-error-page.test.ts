/**
 * Differential: error_page for what the upstream finalizes a proxied request with, against nginx —
 * an unreachable server's 502 paged by the server's `error_page 500 502 503 504 /50x.html` (a file),
 * the same with a redirect, for a POST, and to a page that is proxied itself (relayed under the
 * error's status); a server that times out (504) sent to a named location
 * with `=200`; `proxy_intercept_errors on` paging an upstream 404 (the error's status kept) and 503
 * (`=`: the page's own) and 401 (its WWW-Authenticate kept for the page), relaying a 500 it has no page for and a 200; `proxy_intercept_errors off`
 * relaying the upstream's 404 body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { freePort } from '../helpers/free-port.ts';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';

const http = (port: number, upstream: number, dead: number, root: string) => `
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${port};
        error_page 500 502 503 504 /50x.html;
        location = /50x.html { root ${root}; }
        location /down/ { proxy_pass http://127.0.0.1:${dead}; }
        location /down-redirect/ { proxy_pass http://127.0.0.1:${dead}; error_page 502 http://example.com/sorry; }
        location /slow/ {
            proxy_pass http://backend;
            proxy_read_timeout 300ms;
            error_page 504 =200 @fallback;
        }
        location /down-proxied/ { proxy_pass http://127.0.0.1:${dead}; error_page 502 /pass/page; }
        location /pass/ { proxy_pass http://backend; }
        location @fallback { return 200 "fallback $uri\\n"; }
        location /icpt/ {
            proxy_pass http://backend;
            proxy_intercept_errors on;
            error_page 404 /nf.html;
            error_page 503 = /unavailable;
            error_page 401 /login;
        }
        location = /login { return 401; }
        location = /nf.html { return 200 "not found page\\n"; }
        location = /unavailable { return 200 "unavailable page\\n"; }
        location /relay/ {
            proxy_pass http://backend;
            proxy_intercept_errors off;
            error_page 404 /nf.html;
        }
    }
`;

const PROBES: readonly { path: string; method?: string }[] = [
  { path: '/down/x' },
  { path: '/down/x', method: 'POST' },
  { path: '/down-redirect/x' },
  { path: '/down-proxied/x' },
  { path: '/slow/x' },
  { path: '/icpt/404' },
  { path: '/icpt/503' },
  { path: '/icpt/401' },
  { path: '/icpt/500' },
  { path: '/icpt/200' },
  { path: '/relay/404' },
  { path: '/relay/200' },
];

describe('error_page for upstream failures and intercepted answers: the replica answers as nginx', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let both: SideBySide;
  let replicaBase: string;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url?.startsWith('/slow/')) {
        setTimeout(() => res.destroyed || res.end('late\n'), 1500);
        return;
      }
      const status = Number(/\/(\d{3})$/.exec(req.url ?? '')?.[1] ?? 200);
      const body = `upstream ${status} ${req.method} ${req.url}\n`;
      const challenge = status === 401 ? { 'www-authenticate': 'Basic realm="x"' } : {};
      const head = { 'content-type': 'text/plain', 'content-length': String(body.length), ...challenge };
      res.writeHead(status, head);
      res.end(body);
    });
    const dead = await freePort();
    dir.write('50x.html', 'the 50x page\n');
    const root = dir.path;
    both = await startSideBySide((port) => http(port, upstream.port, dead, root));
    replicaBase = `http://127.0.0.1:${both.replicaPort}`;
  });

  after(async () => {
    await Promise.all([both?.stop(), upstream?.close()]);
    dir.remove();
  });

  function send(base: string, path: string, method = 'GET'): Promise<string> {
    return answerSummary(`${base}${path}`, { method, headers: ['location', 'www-authenticate'] });
  }

  test('statuses, Location and bodies', async () => {
    for (const p of PROBES) {
      const fromNginx = await send(`http://127.0.0.1:${both.nginxPort}`, p.path, p.method);
      const fromReplica = await send(replicaBase, p.path, p.method);
      assert.equal(fromReplica, fromNginx, `${p.method ?? 'GET'} ${p.path}`);
    }
  });
});
