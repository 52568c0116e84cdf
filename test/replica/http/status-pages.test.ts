/**
 * Rejection answers against the oracle: for every `limit_req_status` nginx accepts (400..599), nginx's
 * `return N;` and the proxy's `reject N` must send the same status line, body (with limitswitch in the
 * tail) and Content-Type — or both close the connection without a response.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Decision } from '../../../src/replica/http/contract/decision.ts';
import { serverValue } from '../../../src/replica/http/wire/server-tokens.ts';
import {
  closesConnection,
  errorPage,
  statusReason,
  wireStatus,
} from '../../../src/replica/http/wire/status-pages.ts';
import { type RunningNginx, startNginx } from '../../helpers/nginx.ts';
import { type RawOutcome, rawRequest, startProxy, type TestProxy } from './harness.ts';

const CODES = Array.from({ length: 200 }, (_, i) => 400 + i);

function summary(outcome: RawOutcome, tail: string): string {
  if ('closedWithoutResponse' in outcome) return 'closed without a response';
  const marker = `<hr><center>${tail}</center>`;
  const hasTail = outcome.body.includes(marker);
  const length = outcome.header('content-length');
  return JSON.stringify({
    status: outcome.status,
    reason: outcome.reason,
    type: outcome.header('content-type') ?? null,
    // the tails differ in length ("nginx/1.22.1" vs "limitswitch/…"); the rest must match to the byte
    length: length === undefined ? null : Number(length) - (hasTail ? tail.length : 0),
    body: outcome.body.replace(marker, '<hr><center>TAIL</center>'),
  });
}

describe('status pages: reject N answers as nginx `return N`', () => {
  let nginx: RunningNginx;
  let proxy: TestProxy<Decision>;

  before(async () => {
    const locations = CODES.map((code) => `location = /${code} { return ${code}; }`).join('\n        ');
    nginx = await startNginx({
      http: (port) => `
    server {
        listen 127.0.0.1:${port};
        ${locations}
    }`,
    });
    proxy = await startProxy<Decision>([{ port: 9 }], {
      decide: (ctx) => ({ action: 'reject', code: Number(ctx.req.url?.slice(1)) }),
    });
  });
  after(async () => {
    await nginx?.stop();
    await proxy?.close();
  });

  test('400..599', async () => {
    const mismatches: string[] = [];
    for (const code of CODES) {
      const lines = [`GET /${code} HTTP/1.1`, 'Host: cafe.example.com', 'Connection: close'];
      // server_tokens on (the default): the tails name the versions
      const theirs = summary(await rawRequest(nginx.port, lines), 'nginx/1.22.1');
      const ours = summary(await rawRequest(proxy.port, lines), serverValue(true));
      if (theirs !== ours) mismatches.push(`${code}: nginx ${theirs}\n     ours ${ours}`);
    }
    assert.deepEqual(mismatches, []);
  });
});

describe('status pages: table', () => {
  test('the pseudo codes 494..497 go out as 400; 444/408/499 close', () => {
    assert.equal(wireStatus(494), 400);
    assert.equal(wireStatus(503), 503);
    assert.equal(statusReason(503), 'Service Temporarily Unavailable');
    assert.equal(statusReason(504), 'Gateway Time-out');
    assert.equal(statusReason(420), '');
    assert.deepEqual(
      CODES.filter((code) => closesConnection(code)),
      [408, 444, 499],
    );
    assert.equal(errorPage(420, true), null);
    assert.equal(
      errorPage(503, false)?.toString(),
      '<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n' +
        '<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>limitswitch</center>\r\n' +
        '</body>\r\n</html>\r\n',
    );
    assert.match(errorPage(503, true)!.toString(), /<hr><center>limitswitch\/\d+\.\d+\.\d+<\/center>\r\n/);
  });
});
