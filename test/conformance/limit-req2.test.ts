/**
 * nginx-tests `limit_req2.t` (several limits in one location), ported to one timeline. `slow` drains
 * 16 milli-requests per second (1r/m), so a second request with the same `a` is rejected at any gap
 * under a minute; `fast` (1000r/s) drains a whole request per ms, so any gap ≥ 1 ms passes. Each pair is
 * 150 ms apart and groups use distinct keys, so no decision depends on exact timing.
 */
import { conformanceCase, type Step } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    limit_req_zone  $arg_a  zone=slow:1m   rate=1r/m;
    limit_req_zone  $arg_b  zone=fast:1m   rate=1000r/s;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;

        location / {
            limit_req    zone=fast;
            limit_req    zone=slow;
        }

        location /t2.html {
            limit_req    zone=fast  nodelay;
            limit_req    zone=slow  nodelay;
        }
    }
`;

const A = '10.0.0.1';
const PASSED = (zone: string) => ({ code: 200, status: 'PASSED', zone }) as const;
const REJECTED = (zone: string) => ({ code: 503, status: 'REJECTED', zone }) as const;
const pair = (
  at: number,
  uri: string,
  labels: [string, string],
  first: Step['expect'],
  second: Step['expect'],
) =>
  [
    { at, addr: A, uri, label: labels[0], expect: first },
    { at: at + 150, addr: A, uri, label: labels[1], expect: second },
  ] satisfies Step[];

conformanceCase({
  name: 'limit_req2.t: multiple limits (fast, slow, both, no key; nodelay)',
  http,
  steps: [
    // Only `fast` has a key: it is the last zone evaluated, so it commits and decides.
    ...pair(0, '/t1.html?b=1', ['fast', 'fast - passed'], PASSED('fast'), PASSED('fast')),
    // Only `slow` has a key: E = 1000 − 16·150/1000 = 998 > 0 (no burst).
    ...pair(200, '/t1.html?a=1', ['slow', 'slow - rejected'], PASSED('slow'), REJECTED('slow')),
    // Both: `fast` checks (excess 0, no commit), `slow` rejects; the pass is credited to `slow`, the last
    // zone that accounted it.
    ...pair(400, '/t1.html?a=2&b=2', ['both', 'both - rejected'], PASSED('slow'), REJECTED('slow')),
    // No key at all: nothing accounts the request, $limit_req_status stays unset.
    ...pair(
      600,
      '/t1.html',
      ['no key', 'no key - passed'],
      { code: 200, status: '', zone: null },
      { code: 200, status: '', zone: null },
    ),
    ...pair(800, '/t2.html?b=3', ['nodelay fast', 'nodelay fast - passed'], PASSED('fast'), PASSED('fast')),
    ...pair(
      1000,
      '/t2.html?a=3',
      ['nodelay slow', 'nodelay slow - rejected'],
      PASSED('slow'),
      REJECTED('slow'),
    ),
    ...pair(
      1200,
      '/t2.html?a=4&b=4',
      ['nodelay both', 'nodelay both - rejected'],
      PASSED('slow'),
      REJECTED('slow'),
    ),
  ],
  errorLog: [/limiting requests, excess: (0\.9\d\d|1\.000) by zone "slow"/],
});
