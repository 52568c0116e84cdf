/**
 * `limit_except` against real nginx: one configuration served by nginx and by a replica process, the
 * same requests to both, the same status and body — the block's `allow`/`deny` for a method it does
 * not list (`GET` listing `HEAD` too), the location's for one it does, and the location's rewrite
 * script, which a request under the block does not run (nginx merges no script into it); `proxy_pass`
 * inside `limit_except` and inside `if`, and the URI each sends (the location's URI part, or none).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';

const http = (port: number, upstream: number) => `
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location /le-deny { limit_except GET { deny all; } proxy_pass http://backend; }
        location /le-allow { limit_except POST { allow 127.0.0.1; deny all; } deny all; proxy_pass http://backend; }
        location /quirk { limit_except POST { allow all; } return 200 "returned\\n"; }
        location /le-pp/ { limit_except GET { proxy_pass http://backend; } proxy_pass http://backend/loc/; }
        location /if-pp/ { if ($arg_x) { proxy_pass http://backend; } proxy_pass http://backend/loc/; }
        location /if-only/ { if ($arg_x) { proxy_pass http://backend; } }
    }
`;

const PROBES: readonly [string, string][] = [
  ['GET', '/le-deny'],
  ['HEAD', '/le-deny'],
  ['POST', '/le-deny'],
  ['DELETE', '/le-deny'],
  ['PATCH', '/le-deny'],
  ['GET', '/le-allow'],
  ['POST', '/le-allow'],
  ['GET', '/quirk'],
  ['POST', '/quirk'],
  ['GET', '/le-pp/a?b=c'],
  ['POST', '/le-pp/a?b=c'],
  ['GET', '/if-pp/a?x=1'],
  ['GET', '/if-pp/a'],
  ['GET', '/if-only/a?x=1'],
  ['GET', '/if-only/a'],
];

describe('limit_except: the replica answers as nginx', () => {
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

  function send(base: string, method: string, path: string): Promise<string> {
    return answerSummary(`${base}${path}`, { method });
  }

  test('statuses and bodies per method', async () => {
    for (const [method, path] of PROBES) {
      const fromNginx = await send(`http://127.0.0.1:${both.nginxPort}`, method, path);
      const fromReplica = await send(replicaBase, method, path);
      assert.equal(fromReplica, fromNginx, `${method} ${path}`);
    }
  });
});
