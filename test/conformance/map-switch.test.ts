/**
 * The seed's switch pattern: a value (in NGINX Plus, a keyval lookup) feeds a `map` that yields either
 * an empty key — the zone does not account the request — or the client's address. Open-source nginx has
 * no keyval module, so here request headers stand in for the two keyvals:
 *   keyval $uri $enablelimit zone=limitreq_uri           →  X-Switch
 *   keyval $server_name $enableserverlimit zone=...      →  X-Server-Switch
 */
import { conformanceSuite } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    map $http_x_switch $enablelimit {
        default "";
        1 1;
    }
    map $http_x_server_switch $enableserverlimit {
        default "";
        1 1;
    }

    map $enablelimit $limit_key {
        default "";
        1  $binary_remote_addr;
    }
    map $enableserverlimit $limit_key_servername {
        default "";
        1 $server_name;
    }

    limit_req_zone $limit_key zone=req_zone_10:1m rate=10r/s;
    limit_req_zone $limit_key zone=req_zone_20:1m rate=20r/s;
    limit_req_zone $limit_key_servername zone=perserver:10m rate=50r/s;

    server {
        listen 127.0.0.1:${port};
        server_name cafe.example.com;

        location /coffee {
            limit_req zone=req_zone_10 burst=1 nodelay;
            limit_req zone=perserver nodelay;
        }

        location /tea {
            limit_req zone=req_zone_20 burst=5 nodelay;
            limit_req zone=perserver nodelay;
        }
    }
`;

const HOST = 'cafe.example.com';
const ON = { 'X-Switch': '1' };
const NOT_ACCOUNTED = { code: 200, status: '', zone: null } as const;

conformanceSuite({
  name: 'map switch: the seed pattern with switches from request headers',
  http,
  scenarios: [
    {
      name: 'switch off: the empty key is not accounted',
      steps: [
        // Same millisecond, far over any burst — but neither zone has a key, so nothing limits.
        ...[0, 1, 2, 3].map((i) => ({
          at: 0,
          addr: '10.0.1.1',
          host: HOST,
          uri: '/coffee/latte',
          pipelined: i > 0,
          expect: NOT_ACCOUNTED,
        })),
        // Values other than exactly "1" fall to the map's default "".
        {
          at: 50,
          addr: '10.0.1.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: { 'X-Switch': '0' },
          expect: NOT_ACCOUNTED,
        },
        {
          at: 50,
          addr: '10.0.1.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: { 'X-Switch': '01' },
          pipelined: true,
          expect: NOT_ACCOUNTED,
        },
      ],
    },
    {
      name: 'switch on: req_zone_10 burst=1 nodelay limits per client',
      steps: [
        // One ms: E = 0, 1000 (= burst), 2000 > burst. `perserver` has an empty key: req_zone_10 decides.
        {
          at: 0,
          addr: '10.0.2.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: ON,
          expect: pass('req_zone_10'),
        },
        {
          at: 0,
          addr: '10.0.2.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: ON,
          pipelined: true,
          expect: pass('req_zone_10'),
        },
        // A request with the switch off in between touches nothing.
        { at: 0, addr: '10.0.2.1', host: HOST, uri: '/coffee/latte', pipelined: true, expect: NOT_ACCOUNTED },
        {
          at: 0,
          addr: '10.0.2.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: ON,
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'req_zone_10' },
        },
        // Another client has its own state.
        {
          at: 50,
          addr: '10.0.2.2',
          host: HOST,
          uri: '/coffee/latte',
          headers: ON,
          expect: pass('req_zone_10'),
        },
        // 250 ms drain 2500: E = 1000 − 2500 + 1000 → 0.
        {
          at: 250,
          addr: '10.0.2.1',
          host: HOST,
          uri: '/coffee/latte',
          headers: ON,
          expect: pass('req_zone_10'),
        },
      ],
    },
    {
      name: 'server switch: perserver counts every client of the server',
      steps: [
        // The key is $server_name: different clients share one state. No burst: the 2nd in the ms is rejected.
        {
          at: 0,
          addr: '10.0.3.1',
          host: HOST,
          uri: '/tea/green',
          headers: { 'X-Server-Switch': '1' },
          expect: pass('perserver'),
        },
        {
          at: 0,
          addr: '10.0.3.2',
          host: HOST,
          uri: '/tea/green',
          headers: { 'X-Server-Switch': '1' },
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'perserver' },
        },
        // 50r/s drains 50 per ms: 150 ms later E = 0 − 7500 + 1000 → 0.
        {
          at: 150,
          addr: '10.0.3.3',
          host: HOST,
          uri: '/tea/green',
          headers: { 'X-Server-Switch': '1' },
          expect: pass('perserver'),
        },
      ],
    },
    {
      name: 'both switches on: the per-client zone checks, perserver commits and decides',
      steps: [
        // req_zone_20 (non-last) checks E = 0; perserver (last) accounts: PASSED by perserver.
        {
          at: 0,
          addr: '10.0.4.1',
          host: HOST,
          uri: '/tea/black',
          headers: { ...ON, 'X-Server-Switch': '1' },
          expect: pass('perserver'),
        },
        // req_zone_20: E = 1000 ≤ burst 5000; perserver: E = 1000 > 0 → rejected by perserver; req_zone_20 is
        // not committed.
        {
          at: 0,
          addr: '10.0.4.1',
          host: HOST,
          uri: '/tea/black',
          headers: { ...ON, 'X-Server-Switch': '1' },
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'perserver' },
        },
        // Server switch off: only req_zone_20 accounts; its committed E was 0, so now E = 1000 ≤ burst.
        {
          at: 0,
          addr: '10.0.4.1',
          host: HOST,
          uri: '/tea/black',
          headers: ON,
          pipelined: true,
          expect: pass('req_zone_20'),
        },
      ],
    },
  ],
});

function pass(zone: string) {
  return { code: 200, status: 'PASSED', zone } as const;
}
