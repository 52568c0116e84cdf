/**
 * Per-client keys: `$binary_remote_addr` (4 bytes for IPv4, 16 for IPv6 — an IPv4-mapped IPv6 address
 * is a different key from the IPv4 one) gives each client its own state, whatever the interleaving.
 */
import { conformanceCase, type Step } from '../helpers/conformance-case.ts';

const PASS = { code: 200, status: 'PASSED', zone: 'per_ip' } as const;
const REJECT = { code: 503, status: 'REJECTED', zone: 'per_ip' } as const;

/** Requests in one millisecond on one connection, each from its own client address. */
function interleaved(at: number, clients: readonly [string, Step['expect']][]): Step[] {
  return clients.map(([addr, expect], i) => ({ at, addr, uri: '/index.html', pipelined: i > 0, expect }));
}

const A = '10.0.11.1';
const B = '10.0.11.2';
const C = '10.0.11.3';

conformanceCase({
  name: 'per-client keys: interleaved clients, IPv6, IPv4-mapped IPv6',
  http: (port) => `
    limit_req_zone $binary_remote_addr zone=per_ip:1m rate=10r/s;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location / {
            limit_req zone=per_ip burst=1 nodelay;
        }
    }
`,
  steps: [
    // burst=1 nodelay: two requests per client pass in one ms, the third is rejected.
    ...interleaved(0, [
      [A, PASS],
      [B, PASS],
      [A, PASS],
      [C, PASS],
      [A, REJECT],
      [B, PASS],
    ]),
    ...interleaved(20, [
      ['2001:db8::1', PASS],
      ['2001:db8::2', PASS],
      ['2001:db8::1', PASS],
      ['2001:db8::1', REJECT],
    ]),
    ...interleaved(40, [
      ['10.0.11.9', PASS],
      ['::ffff:10.0.11.9', PASS],
      ['10.0.11.9', PASS],
      ['::ffff:10.0.11.9', PASS],
      ['10.0.11.9', REJECT],
    ]),
    // 250 ms drain 2500: everyone starts over (E clamps at 0, last = 250).
    ...interleaved(250, [
      [A, PASS],
      [B, PASS],
      [C, PASS],
    ]),
    // 50 ms after that: E = 0 − 500 + 1000 = 500 passes, the next in the ms has 1500 > burst.
    ...interleaved(300, [
      [A, PASS],
      [A, REJECT],
    ]),
  ],
});
