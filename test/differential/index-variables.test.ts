/**
 * Differential: `index` with variables against nginx — map_volatile.t's shape (a map's value read
 * by `index` before its internal redirect is kept after it, as nginx keeps the request's variables;
 * a `volatile` map's is computed again under the new URI), and index names evaluated per request
 * naming a file that exists, one that does not (the next name tried, or the directory's 403), a
 * directory that does not exist (404), and a name that is absolute (redirected to without a test);
 * an error page's redirect, to a URI and to a named location, keeps the variables too.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const http = (port: number, root: string) => `
    map $uri $uri_cached {
        /1/          /1/redirect;
        /1/redirect  uncached;
    }
    map $uri $uri_uncached {
        volatile;
        /2/          /2/redirect;
        /2/redirect  uncached;
    }
    map $uri $m {
        default   other;
        ~missing  found;
    }
    map $arg_f $name {
        default  page.html;
        missing  none.html;
        abs      /abs/target;
    }
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        root ${root};
        location /1 { index $uri_cached; }
        location /1/redirect { add_header X-URI $uri_cached always; }
        location /2 { index $uri_uncached; }
        location /2/redirect { add_header X-URI $uri_uncached always; }
        location /v/ { index $name fallback.html; }
        location /w/ { index $name; }
        location /abs/ { return 200 "abs $uri $args\\n"; }
        location /e/ { set $x $m; error_page 404 /err; }
        location = /err { return 200 "m=$m x=$x uncached=$uri_uncached\\n"; }
        location /n/ { set $x $m; error_page 404 @named; }
        location @named { return 200 "m=$m x=$x\\n"; }
    }
`;

const PROBES: readonly string[] = [
  '/1/',
  '/2/',
  '/v/',
  '/v/?f=missing',
  '/v/?f=abs',
  '/w/',
  '/w/?f=missing',
  '/none/',
  '/e/missing',
  '/n/missing',
];

describe('index with variables: the replica answers as nginx', () => {
  const dir = new TempDir();
  let both: SideBySide;

  before(async () => {
    for (const sub of ['1', '2', 'v', 'w']) mkdirSync(dir.file(sub));
    dir.write('v/page.html', 'v page\n');
    dir.write('v/fallback.html', 'v fallback\n');
    dir.write('w/page.html', 'w page\n');
    both = await startSideBySide((port) => http(port, dir.path));
  });

  after(async () => {
    await both?.stop();
    dir.remove();
  });

  function send(port: number, path: string): Promise<string> {
    return answerSummary(`http://127.0.0.1:${port}${path}`, { headers: ['x-uri'] });
  }

  test('statuses, X-URI and bodies', async () => {
    for (const path of PROBES) {
      const fromNginx = await send(both.nginxPort, path);
      const fromReplica = await send(both.replicaPort, path);
      assert.equal(fromReplica, fromNginx, path);
    }
  });

  test("map_volatile.t: the cached map's value survives the index's redirect, the volatile one's does not", async () => {
    assert.match(await send(both.replicaPort, '/1/'), /x-uri:\/1\/redirect/);
    assert.match(await send(both.replicaPort, '/2/'), /x-uri:uncached/);
  });
});
