/**
 * ngx_http_rewrite_module against real nginx: one configuration served by nginx and by a replica
 * process, the same requests to both, the same status, Location, body and URI the upstream receives —
 * captures (numbered and named), `last` and a URI changed without a flag (the location found again),
 * `break` (and the whole URI proxy_pass sends after it), redirects and their arguments, `set`, `if`
 * with a regex's captures and a `rewrite` inside, a server-level rewrite, the rewrite cycle's 500
 * after ten changes, a URI rewritten to nothing, `if`'s file tests (-f, -d, -e, -x and their `!`) —
 * and the error-log lines they write.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';

const http = (port: number, upstream: number, files: string) => `
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        rewrite ^/old/(.*)$ /new/$1;
        location /new/ { return 200 "new uri:$uri args:$args request_uri:$request_uri\\n"; }
        location /echo/ { return 200 "uri:$uri args:$args is_args:$is_args 1:$1\\n"; }
        location /cap/ { rewrite ^/cap/(\\w+)/(\\w+) /echo/$2/$1?x=$1 last; return 404; }
        location /named/ { rewrite ^/named/(?<first>[a-z]+) /echo/named-$first last; }
        location /loop { rewrite ^ /again last; }
        location /again { rewrite ^ /loop last; }
        location /brk/ { rewrite ^/brk/(.*) /other/$1 break; proxy_pass http://backend; }
        location /brkuri/ { rewrite ^/brkuri/(.*) /other/$1 break; proxy_pass http://backend/base/; }
        location /noflag/ { rewrite ^/noflag/(.*) /proxied/$1; set $after yes; }
        location /proxied/ { add_header X-After "$after" always; proxy_pass http://backend/up/; }
        location /keep/ { rewrite ^/keep/(.*) /keep/$1/x break; proxy_pass http://backend/k/; }
        location /redir/ { rewrite ^/redir/(.*) /target/$1 redirect; }
        location /perm/ { rewrite ^/perm/(.*) http://example.com/$1 permanent; }
        location /scheme { rewrite ^ $scheme://example.com/s; }
        location /add { rewrite ^ http://example.com/?c=d redirect; }
        location /no { rewrite ^ http://example.com/?c=d? redirect; }
        location /args { rewrite ^ /echo/args?a=1; }
        location /noargs { rewrite ^ /echo/noargs?; }
        location /quoted/ { rewrite ^/quoted/(.*) /echo/$1?q=$1; }
        location /set { set $v "a-$arg_x"; if ($v = a-1) { set $v one; } return 200 "v:$v\\n"; }
        location /ifre/ { if ($uri ~ ^/ifre/(?<num>\\d+)) { return 200 "num $1 $num\\n"; } return 200 "none\\n"; }
        location /ifrw { if ($arg_go) { rewrite ^ /echo/from-if last; } return 200 "stayed\\n"; }
        location /brkset { set $a 1; break; set $a 2; }
        location /brkset2 { set $a 1; if ($a) { add_header X-A $a always; break; } return 404; }
        location /empty { rewrite ^ ?x; }
        location /before/ { set $was $uri$args; rewrite ^/before/(.*) /echo/$1?was=$was; }
        location /file { if (-x ${files}/$arg_c) { return 200 "exec\\n"; } if (-f ${files}/$arg_c) { return 200 "file\\n"; } if (-d ${files}/$arg_c) { return 200 "dir\\n"; } if (!-e ${files}/$arg_c) { return 200 "none\\n"; } return 200 "other\\n"; }
        location /logged/ { rewrite_log on; rewrite ^/nomatch /x; rewrite ^/logged/(.*) /echo/$1?y=$1; }
    }
`;

const PATHS: readonly string[] = [
  '/old/a?b=c',
  '/cap/one/two?orig=1',
  '/cap/x',
  '/named/abc/def',
  '/loop',
  '/brk/a/b?z=1',
  '/brkuri/a%20b?z=1',
  '/noflag/p?q=1',
  '/keep/a',
  '/redir/x?y=1',
  '/perm/x?y=1',
  '/scheme',
  '/add?a=b',
  '/no?a=b',
  '/args?orig=1',
  '/args',
  '/noargs?orig=1',
  '/quoted/a%20b+c',
  '/quoted/plain',
  '/set?x=1',
  '/set?x=2',
  '/ifre/42',
  '/ifre/x',
  '/ifrw?go=1',
  '/ifrw',
  '/brkset2',
  '/empty',
  '/before/q?r=s',
  '/logged/z?w=1',
  '/file?c=plain',
  '/file?c=run',
  '/file?c=sub',
  '/file?c=missing',
  '/file?c=plain/below',
];

/** The error-log lines about rewriting, without time, pid, connection number and `host` (ports differ). */
function rewriteLines(log: string): string[] {
  return log
    .split('\n')
    .filter((line) => /rewrit|does not match|matches "/.test(line))
    .map((line) =>
      line
        .replace(/^\S+ \S+ /, '')
        .replace(/\d+#\d+: \*\d+ /, '')
        .replace(/, host: .*$/, ''),
    );
}

describe('rewrite, set, break, if: the replica answers as nginx', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let both: SideBySide;
  let replicaBase: string;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      const body = `upstream ${req.url}\n`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      res.end(body);
    });
    const files = dir.file('files');
    mkdirSync(join(files, 'sub'), { recursive: true });
    writeFileSync(join(files, 'plain'), 'x');
    writeFileSync(join(files, 'run'), 'x', { mode: 0o755 });
    both = await startSideBySide((port) => http(port, upstream.port, files), {
      replicaArgs: ['--error-log-level', 'info'],
    });
    replicaBase = `http://127.0.0.1:${both.replicaPort}`;
  });

  after(async () => {
    await Promise.all([both?.stop(), upstream?.close()]);
    dir.remove();
  });

  function send(base: string, path: string): Promise<string> {
    return answerSummary(`${base}${path}`, { headers: ['location', 'x-a', 'x-after'] });
  }

  test('statuses, Location, bodies and the URI the upstream receives', async () => {
    for (const path of PATHS) {
      const fromNginx = await send(`http://127.0.0.1:${both.nginxPort}`, path);
      const fromReplica = await send(replicaBase, path);
      assert.equal(fromReplica, fromNginx, path);
    }
  });

  test('the cycle, the empty URI and rewrite_log write the same error-log lines', async () => {
    for (const path of ['/loop', '/empty', '/logged/z?w=1']) {
      await send(`http://127.0.0.1:${both.nginxPort}`, path);
      await send(replicaBase, path);
    }
    const expected = rewriteLines(both.nginx.errorLog());
    assert.ok(
      expected.some((l) => l.includes('rewrite or internal redirection cycle')),
      expected.join('\n'),
    );
    // the replica's error log comes through a pipe: wait for its lines to arrive
    await waitFor(() => rewriteLines(both.replica.process.stderr).length >= expected.length, {
      message: 'the replica to log as many lines',
    }).catch(() => undefined);
    assert.deepEqual(rewriteLines(both.replica.process.stderr), expected);
  });
});
