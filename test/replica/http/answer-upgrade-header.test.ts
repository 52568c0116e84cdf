/**
 * An upstream's `Upgrade` on an answer that does not switch protocols is relayed, as nginx 1.22
 * relays it (a 426 without it breaks RFC 9110 §15.5.22), even when its `Connection` names it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PASS } from '../../../src/replica/http/contract/decision.ts';
import { ScriptedUpstream } from '../../helpers/raw-peers.ts';
import { rawRequest, responseOf, startProxy } from './harness.ts';

test("a 200 and a 426 keep the upstream's Upgrade; Connection and Keep-Alive are still the proxy's own", async () => {
  const upstream = await ScriptedUpstream.start((request) => {
    const status = request.startsWith('GET /426') ? '426 Upgrade Required' : '200 OK';
    return `HTTP/1.1 ${status}\r\nConnection: Upgrade, keep-alive\r\nUpgrade: websocket\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok`;
  });
  const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS });
  try {
    for (const [path, status] of [
      ['/200', 200],
      ['/426', 426],
    ] as const) {
      const out = responseOf(
        await rawRequest(proxy.port, [`GET ${path} HTTP/1.1`, 'Host: cafe.example.com', 'Connection: close']),
      );
      assert.equal(out.status, status);
      assert.equal(out.header('upgrade'), 'websocket', path);
      assert.equal(out.header('connection'), 'close', path);
      assert.equal(out.header('keep-alive'), undefined, path);
      assert.equal(out.body, 'ok');
    }
  } finally {
    await proxy.close();
    await upstream.close();
  }
});
