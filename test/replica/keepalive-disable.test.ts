/**
 * `keepalive_disable` against real nginx: the same requests to both, the same `Connection` in the
 * answer — by default (msie6) a POST from MSIE 4–6 (not 6 with SV1) gets none; `safari` takes it from
 * Safari on macOS (not Chrome) and gives it back to MSIE; `none` keeps it for everyone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Replica } from '../../src/replica/replica.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { rawExchange } from '../helpers/raw-peers.ts';

const MSIE6 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)';
const MSIE6_SV1 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)';
const MSIE55 = 'Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)';
const OPERA = 'Opera/9.80 (compatible; MSIE 6.0; Windows NT 5.1)';
const SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15';
const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 Chrome/120.0 Safari/537.36';

const locations = `
        location /default { return 200 "x"; }
        location /safari { keepalive_disable safari; return 200 "x"; }
        location /none { keepalive_disable none; return 200 "x"; }
        location /both { keepalive_disable msie6; keepalive_disable safari; return 200 "x"; }`;

const PROBES: readonly (readonly [method: string, path: string, agent: string])[] = [
  ['POST', '/default', MSIE6],
  ['GET', '/default', MSIE6],
  ['POST', '/default', MSIE6_SV1],
  ['POST', '/default', MSIE55],
  ['POST', '/default', OPERA],
  ['GET', '/default', SAFARI],
  ['GET', '/safari', SAFARI],
  ['GET', '/safari', CHROME],
  ['POST', '/safari', MSIE6],
  ['POST', '/none', MSIE6],
  ['GET', '/none', SAFARI],
  ['POST', '/both', MSIE6],
  ['GET', '/both', SAFARI],
];

/** The answer's `Connection` (the connection is left open by the client). */
async function connection(port: number, method: string, path: string, agent: string): Promise<string> {
  const head = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ${agent}\r\nContent-Length: 0\r\n\r\n`;
  const answer = await rawExchange(port, [head], { until: (text) => text.includes('\r\n\r\n') });
  return /\r\nConnection: ([^\r]*)/i.exec(answer.text)?.[1] ?? 'none';
}

describe('keepalive_disable: as nginx', () => {
  let nginx: RunningNginx;
  let replica: Replica;
  let port: number;

  before(async () => {
    nginx = await startNginx({
      http: (nginxPort) => `
    server {
        listen 127.0.0.1:${nginxPort};
        server_name localhost;${locations}
    }`,
    });
    ({ replica, port } = await startInProcessReplica(
      'keepalive-disable',
      `events {}\nhttp {\n    server {\n        listen 80;\n        server_name localhost;${locations}\n    }\n}\n`,
    ));
  });
  after(async () => {
    await nginx?.stop();
    await replica?.close();
  });

  test('the same Connection for every browser and setting', async () => {
    const theirs: string[] = [];
    const ours: string[] = [];
    for (const [method, path, agent] of PROBES) {
      const probe = `${method} ${path} ${agent.slice(0, 40)}`;
      theirs.push(`${probe}: ${await connection(nginx.port, method, path, agent)}`);
      ours.push(`${probe}: ${await connection(port, method, path, agent)}`);
    }
    assert.deepEqual(ours, theirs);
    // the oracle saw both outcomes: the probes test something
    assert.ok(theirs.some((line) => line.endsWith(': close')));
    assert.ok(theirs.some((line) => line.endsWith(': keep-alive')));
  });
});
