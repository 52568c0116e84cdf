/**
 * `error_page` against real nginx: one configuration served by nginx and by a replica process, the
 * same requests to both, the same status, Location and body — a page for `return`, `deny`, a
 * limit_req refusal and a file not found; `=` and `=code`; redirects; named locations (and a
 * `rewrite` there); a page that fails itself (once, and with `recursive_error_pages on`); the GET an
 * error page goes on with; the rewrite cycle's 500, which no page answers; a page whose own answer is
 * a `return` without text, or a redirect; limit_req counting a request once, whatever its error page
 * (and the page's URI the upstream receives); an `internal` location only a page or a rewrite
 * reaches; the 301 FIND_CONFIG answers for a proxied location's name without its slash.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';

const http = (port: number, upstream: number) => `
    limit_req_zone $uri zone=one:1m rate=1r/m;
    limit_req_zone $server_name zone=two:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        error_page 404 /nf;
        location = /nf { return 200 "not found page uri:$uri args:$args method:$request_method\\n"; }
        location = /ok { return 200 "ok $request_method $args\\n"; }
        location /missing/ { }
        location /r404 { return 404; }
        location /r404text { return 404 "own\\n"; }
        location /eq { error_page 403 = /ok?from=eq; deny all; }
        location /eq201 { error_page 403 =201 /ok; deny all; }
        location /redir { error_page 403 http://example.com/forbidden; deny all; }
        location /redir301 { error_page 403 =301 http://example.com/forbidden; deny all; }
        location /named { error_page 403 @fallback; deny all; }
        location @fallback { return 200 "fallback uri:$uri\\n"; }
        location /named-rw { error_page 403 @rw; deny all; }
        location @rw { rewrite ^ /ok?rw=1 last; }
        location /nowhere { error_page 403 @absent; deny all; }
        location /twice { error_page 404 /r404; return 404; }
        location /recursive { recursive_error_pages on; error_page 404 /r404; return 404; }
        location /limited { limit_req zone=one; error_page 503 =429 /busy; proxy_pass http://backend; }
        location = /busy { return 200 "busy\\n"; }
        location /cycle { error_page 500 /nf; rewrite ^ /cycle last; }
        location /e302 { error_page 302 /ok; return 302 /elsewhere; }
        location /empty { error_page 404 /empty204; return 404; }
        location = /empty204 { return 204; }
        location /to-redirect { error_page 404 /redirecting; return 404; }
        location = /redirecting { rewrite ^ http://example.com/r redirect; }
        location / { }
        location /auto/ { proxy_pass http://backend; }
        location "/auto sp/" { proxy_pass http://backend; }
        location /once/ { limit_req zone=two nodelay; error_page 404 = /once-page; }
        location = /once-page { limit_req zone=two nodelay; proxy_pass http://backend; }
        location /to-auto { error_page 404 /auto; return 404; }
        location = /hidden { internal; return 200 "hidden $uri\\n"; }
        location /to-hidden { error_page 403 /hidden; deny all; }
        location /rw-hidden { rewrite ^ /hidden last; }
    }
`;

const PROBES: readonly { path: string; method?: string }[] = [
  { path: '/missing/file' },
  { path: '/r404?a=b' },
  { path: '/r404', method: 'POST' },
  { path: '/r404text' },
  { path: '/eq' },
  { path: '/eq201' },
  { path: '/redir' },
  { path: '/redir301' },
  { path: '/named' },
  { path: '/named-rw' },
  { path: '/nowhere' },
  { path: '/twice' },
  { path: '/recursive' },
  { path: '/limited' },
  { path: '/limited' },
  { path: '/cycle' },
  { path: '/e302' },
  { path: '/empty' },
  { path: '/to-redirect' },
  { path: '/auto' },
  { path: '/auto?x=1' },
  { path: '/auto%20sp?y' },
  { path: '/to-auto' },
  { path: '/once/missing' },
  { path: '/hidden' },
  { path: '/to-hidden' },
  { path: '/rw-hidden' },
];

describe('error_page: the replica answers as nginx', () => {
  let upstream: TestUpstream;
  let both: SideBySide;
  let replicaBase: string;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      const body = `upstream ${req.method} ${req.url}\n`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      res.end(body);
    });
    both = await startSideBySide((port) => http(port, upstream.port));
    replicaBase = `http://127.0.0.1:${both.replicaPort}`;
  });

  after(async () => {
    await Promise.all([both?.stop(), upstream?.close()]);
  });

  function send(base: string, path: string, method = 'GET'): Promise<string> {
    return answerSummary(`${base}${path}`, { method, headers: ['location'] });
  }

  test('statuses, Location and bodies', async () => {
    for (const p of PROBES) {
      const fromNginx = await send(`http://127.0.0.1:${both.nginxPort}`, p.path, p.method);
      const fromReplica = await send(replicaBase, p.path, p.method);
      assert.equal(fromReplica, fromNginx, `${p.method ?? 'GET'} ${p.path}`);
    }
  });
});
