/**
 * Several `limit_req` in one location: zones are checked in order, only the last one commits during the
 * check, earlier ones commit after everything passed; the first zone over its burst stops evaluation
 * (later zones are not looked at, earlier ones are not committed); the longest delay wins.
 */
import { conformanceSuite } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    limit_req_zone $binary_remote_addr zone=per_ip:1m rate=10r/s;
    limit_req_zone $http_x_b zone=per_b:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=ten:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=five:1m rate=5r/s;
    limit_req_zone $binary_remote_addr zone=slow_first:1m rate=1r/m;
    limit_req_zone $http_x_k zone=by_k:1m rate=1000r/s;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location /ab {
            limit_req zone=per_ip burst=1 nodelay;
            limit_req zone=per_b;
        }
        location /ten-five {
            limit_req zone=ten burst=5;
            limit_req zone=five burst=5;
        }
        location /five-ten {
            limit_req zone=five burst=5;
            limit_req zone=ten burst=5;
        }
        location /first-new {
            limit_req zone=slow_first burst=1 nodelay;
            limit_req zone=by_k;
        }
    }
`;

const A = '10.0.5.1';

conformanceSuite({
  name: 'multi-zone: several limit_req in one location',
  http,
  scenarios: [
    {
      name: 'a rejection commits nothing, and zones after the rejecting one are not evaluated',
      steps: [
        // per_ip checks E = 0, per_b (new key k1) accounts: passed, credited to per_b.
        { at: 0, addr: A, uri: '/ab.html', headers: { 'X-B': 'k1' }, expect: pass('per_b') },
        // per_ip E = 1000 ≤ burst; per_b E = 1000 > 0 → rejected by per_b; per_ip is not committed.
        {
          at: 0,
          addr: A,
          uri: '/ab.html',
          headers: { 'X-B': 'k1' },
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'per_b' },
        },
        // per_ip E = 1000 again (had the reject committed it: 2000 > burst); per_b new key k2 → passed.
        { at: 0, addr: A, uri: '/ab.html', headers: { 'X-B': 'k2' }, pipelined: true, expect: pass('per_b') },
        // per_ip E = 2000 > burst → rejected by per_ip; per_b is never consulted, so k3 stays unknown.
        {
          at: 0,
          addr: A,
          uri: '/ab.html',
          headers: { 'X-B': 'k3' },
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'per_ip' },
        },
        // 200 ms later per_ip E = 1000 − 2000 + 1000 = 0; k3 is new in per_b (a committed k3 would reject).
        { at: 200, addr: A, uri: '/ab.html', headers: { 'X-B': 'k3' }, expect: pass('per_b') },
      ],
    },
    {
      name: 'the longest delay wins, delays are not summed',
      steps: [
        // Second request in the ms: ten E = 1000 → 100 ms, five E = 1000 → 200 ms: waits 200 ms (not 300).
        { at: 0, addr: '10.0.5.2', uri: '/ten-five.html', expect: pass('five') },
        {
          at: 0,
          addr: '10.0.5.2',
          uri: '/ten-five.html',
          pipelined: true,
          expect: { code: 200, status: 'DELAYED', delayMs: 200, zone: 'five' },
        },
        // Same zones in the other order: the earlier zone's longer delay wins.
        { at: 0, addr: '10.0.5.3', uri: '/five-ten.html', expect: pass('ten') },
        {
          at: 0,
          addr: '10.0.5.3',
          uri: '/five-ten.html',
          pipelined: true,
          expect: { code: 200, status: 'DELAYED', delayMs: 200, zone: 'five' },
        },
      ],
      errorLog: [
        /\[warn\] .*delaying request, excess: 1\.000, by zone "five", client: 10\.0\.5\.2/,
        /\[warn\] .*delaying request, excess: 1\.000, by zone "five", client: 10\.0\.5\.3/,
      ],
    },
    {
      name: 'a key new to a non-last zone is committed with excess 0',
      // slow_first (1r/m, burst=1 nodelay) is checked first and committed after by_k accounts. A brand-new
      // node there starts from excess 0, whatever the clock reads.
      steps: [
        { at: 0, addr: '10.0.5.4', uri: '/first-new.html', headers: { 'X-K': '1' }, expect: pass('by_k') },
        // slow_first E = 0 − 3 + 1000 = 997 ≤ burst → passes (an excess left over from the first commit
        // would push it over the burst).
        { at: 200, addr: '10.0.5.4', uri: '/first-new.html', headers: { 'X-K': '2' }, expect: pass('by_k') },
        // slow_first E = 997 − 3 + 1000 = 1994 > burst.
        {
          at: 400,
          addr: '10.0.5.4',
          uri: '/first-new.html',
          headers: { 'X-K': '3' },
          expect: { code: 503, status: 'REJECTED', zone: 'slow_first' },
        },
      ],
    },
  ],
});

function pass(zone: string) {
  return { code: 200, status: 'PASSED', zone } as const;
}
