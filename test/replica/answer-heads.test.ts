/**
 * The heads of the answers against real nginx, field by field with nginx's spelling: the replica's
 * own (`return` with and without text, 204 and 304, a redirect, a page, `server_tokens off`) and
 * relayed ones (204, 304, 200, with the server's own `Server` and `Date`; a server's `content-type`
 * and `content-length` in nginx's spelling, the rest in the server's), both with a `Server`
 * field — `nginx/1.22.1` and `limitswitch/<version>`, `nginx` and `limitswitch` with tokens off.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Replica } from '../../src/replica/replica.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { ScriptedUpstream } from '../helpers/raw-peers.ts';
import { rawRequest, responseOf } from './http/harness.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const locations = (upstream: number) => `
        location = /r204 { return 204; }
        location = /r204-text { return 204 "abc"; }
        location = /r304 { return 304; }
        location = /r304-text { return 304 "abc"; }
        location = /r200 { return 200; }
        location = /r200-text { return 200 "hi"; }
        location = /r201 { return 201; }
        location = /r418 { return 418; }
        location = /r404 { return 404; }
        location = /r302 { return 302 http://example.com/x; }
        location = /off { server_tokens off; return 200 "x"; }
        location = /off-page { server_tokens off; return 404; }
        location /p { proxy_pass http://127.0.0.1:${upstream}; }
        location /p-off { server_tokens off; proxy_pass http://127.0.0.1:${upstream}; }`;

const UPSTREAM_ANSWERS: Readonly<Record<string, string>> = {
  '/p204':
    'HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nServer: up\r\nDate: Mon, 01 Jan 2001 00:00:00 GMT\r\nx-a: 1\r\n\r\n',
  '/p204-bare': 'HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n',
  '/p304': 'HTTP/1.1 304 Not Modified\r\nETag: "a"\r\nServer: up\r\n\r\n',
  '/p200':
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nServer: up\r\nx-b: 2\r\n\r\nok',
  '/p-off': 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: up\r\n\r\nok',
  '/p200-lower':
    'HTTP/1.1 200 OK\r\nCONTENT-TYPE: text/plain\r\ncontent-length: 2\r\netag: "x"\r\nlast-modified: Mon, 01 Jan 2001 00:00:00 GMT\r\n\r\nok',
};

const PATHS = [
  '/r204',
  '/r204-text',
  '/r304',
  '/r304-text',
  '/r200',
  '/r200-text',
  '/r201',
  '/r418',
  '/r404',
  '/r302',
  '/off',
  '/off-page',
  ...Object.keys(UPSTREAM_ANSWERS),
];

/**
 * The head's fields as sent (name's case kept), Date's value and the oracle's own field left out, then
 * the body; a page's length without its tail, and the tail as `server` names it.
 */
function fields(
  port: number,
  path: string,
  server: Record<string, string>,
  lines = [`GET ${path} HTTP/1.1`, 'Host: localhost', 'Connection: close'],
): Promise<string[]> {
  return rawRequest(port, lines).then((outcome) => {
    const res = responseOf(outcome);
    const tail = /<hr><center>([^<]*)<\/center>/.exec(res.body)?.[1] ?? '';
    return [
      `${res.status} ${res.reason}`,
      ...res.headers
        .filter(([name]) => name !== 'X-Limit-Req-Status')
        .map(([name, value]) => {
          if (name === 'Date') return 'Date: <now>';
          if (name === 'Server') return `Server: ${server[value] ?? value}`;
          if (name === 'Content-Length') return `${name}: ${Number(value) - tail.length}`;
          return `${name}: ${value}`;
        })
        .sort(),
      res.body.replace(`<center>${tail}</center>`, `<center>${server[tail] ?? tail}</center>`),
    ];
  });
}

describe('answer heads: as nginx writes them', () => {
  let nginx: RunningNginx;
  let replica: Replica;
  let port: number;
  let upstream: ScriptedUpstream;

  before(async () => {
    upstream = await ScriptedUpstream.start((request) => {
      const path = request.slice(request.indexOf(' ') + 1, request.indexOf(' HTTP/'));
      return UPSTREAM_ANSWERS[path] ?? 'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n';
    });
    nginx = await startNginx({
      http: (nginxPort) => `
    server {
        listen 127.0.0.1:${nginxPort};
        server_name localhost;${locations(upstream.port)}
    }`,
    });
    ({ replica, port } = await startInProcessReplica(
      'answer-heads',
      `events {}\nhttp {\n    server {\n        listen 80;\n        server_name localhost;${locations(upstream.port)}\n    }\n}\n`,
    ));
  });
  after(async () => {
    await nginx?.stop();
    await replica?.close();
    await upstream?.close();
  });

  for (const path of PATHS) {
    test(path, async () => {
      const theirs = await fields(nginx.port, path, { 'nginx/1.22.1': 'FULL', nginx: 'SHORT' });
      const ours = await fields(port, path, { [`limitswitch/${VERSION}`]: 'FULL', limitswitch: 'SHORT' });
      assert.deepEqual(ours, theirs);
    });
  }

  test('a head neither can read: the 400 page, with Server', async () => {
    const lines = ['GET /r200 HTTP/1.1', 'Host: localhost', 'Bad Header', 'Connection: close'];
    const theirs = await fields(nginx.port, '', { 'nginx/1.22.1': 'FULL' }, lines);
    const ours = await fields(port, '', { [`limitswitch/${VERSION}`]: 'FULL' }, lines);
    assert.deepEqual(ours, theirs);
  });
});
