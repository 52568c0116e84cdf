/**
 * The headers of an answer that does not switch protocols relayed as nginx 1.22 relays them: its
 * `Upgrade` (a 426 without it breaks RFC 9110 §15.5.22), the headers its `Connection` names, Proxy-*
 * and X-Accel-* but nginx's five; not Connection, Keep-Alive, nor the hidden X-Accel-Redirect.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PASS } from '../../../src/replica/http/contract/decision.ts';
import { ScriptedUpstream } from '../../helpers/raw-peers.ts';
import { rawRequest, responseOf, startProxy } from './harness.ts';

test("a 200 and a 426 keep the upstream's Upgrade and what its Connection names; Connection and Keep-Alive are the proxy's own", async () => {
  const upstream = await ScriptedUpstream.start((request) => {
    const status = request.startsWith('GET /426') ? '426 Upgrade Required' : '200 OK';
    const more = 'X-Named: named\r\nProxy-Foo: p\r\nX-Accel-Foo: a\r\nX-Accel-Redirect: /in\r\n';
    return `HTTP/1.1 ${status}\r\nConnection: Upgrade, keep-alive, X-Named\r\nUpgrade: websocket\r\nKeep-Alive: timeout=5\r\n${more}Content-Length: 2\r\n\r\nok`;
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
      assert.equal(out.header('x-named'), 'named', path);
      assert.equal(out.header('proxy-foo'), 'p', path);
      assert.equal(out.header('x-accel-foo'), 'a', path);
      assert.equal(out.header('x-accel-redirect'), undefined, path);
      assert.equal(out.body, 'ok');
    }
  } finally {
    await proxy.close();
    await upstream.close();
  }
});
