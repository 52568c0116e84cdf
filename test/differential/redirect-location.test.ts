/**
 * How a redirect's relative `Location` is made absolute, against nginx: `absolute_redirect` (off: it
 * goes as it is), `server_name_in_redirect` (on: the server's first name, not the request's host)
 * and `port_in_redirect` (off: no port), each per location and inherited from the server — for a
 * `return`, a rewrite's redirect and the auto redirect of a proxied location.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const http = (port: number) => `
    server {
        listen 127.0.0.1:${port};
        server_name front.example alias.example;
        location /abs/ { return 302 /target; }
        location /rel/ { absolute_redirect off; return 302 /target; }
        location /named/ { server_name_in_redirect on; return 302 /target; }
        location /portless/ { port_in_redirect off; return 302 /target; }
        location /both/ { server_name_in_redirect on; port_in_redirect off; return 301 /target; }
        location /rewritten/ { absolute_redirect off; rewrite ^ /elsewhere redirect; }
        location /auto/ { absolute_redirect off; proxy_pass http://127.0.0.1:${port}/x/; }
        location /full/ { absolute_redirect off; return 302 http://example.com/kept; }
    }
    server {
        listen 127.0.0.1:${port};
        server_name relative.example;
        absolute_redirect off;
        location / { return 301 /from-server; }
        location /on/ { absolute_redirect on; return 301 /from-location; }
    }
`;

const CASES: readonly (readonly [host: string, path: string])[] = [
  ['alias.example', '/abs/'],
  ['alias.example', '/rel/'],
  ['alias.example', '/named/'],
  ['alias.example', '/portless/'],
  ['alias.example', '/both/'],
  ['alias.example', '/rewritten/'],
  ['alias.example', '/auto'],
  ['alias.example', '/full/'],
  ['relative.example', '/'],
  ['relative.example', '/on/'],
];

describe('absolute_redirect, server_name_in_redirect, port_in_redirect: the replica answers as nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(http);
  });

  after(async () => {
    await both?.stop();
  });

  test('the Location of each redirect', async () => {
    for (const [host, path] of CASES) {
      const send = (port: number) =>
        answerSummary(`http://127.0.0.1:${port}${path}`, {
          headers: ['location'],
          requestHeaders: { host: `${host}:${port}` },
        });
      const fromNginx = await send(both.nginxPort);
      assert.match(fromNginx, /^30[12] location:/, `${host}${path}: ${fromNginx}`);
      assert.equal(await send(both.replicaPort), fromNginx, `${host}${path}`);
    }
  });
});
