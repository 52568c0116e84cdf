/**
 * nginx-tests `limit_req.t`, ported to timelines. Arithmetic in milli-requests: at 2r/s a zone drains
 * 2 per ms, so E = previous excess − 2·gap + 1000; a decision is robust when a ±40 ms shift of any request
 * (±80 on E per request involved) cannot move E across 0 or the burst.
 */
import { conformanceSuite } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    limit_req_zone  $binary_remote_addr  zone=one:1m   rate=2r/s;
    limit_req_zone  $binary_remote_addr  zone=long:1m  rate=2r/s;
    limit_req_zone  $binary_remote_addr  zone=fast:1m  rate=1000r/s;
    limit_req_zone  $http_x_key          zone=key:1m   rate=1000r/s;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;
        location / {
            limit_req    zone=one  burst=1  nodelay;
        }
        location /keyreq.html {
            limit_req    zone=key  burst=100;
        }
        location /status {
            limit_req    zone=one  burst=1  nodelay;

            limit_req_status  501;
        }
        location /long {
            limit_req    zone=long  burst=5;
        }
        location /fast {
            limit_req    zone=fast  burst=1;
        }
    }
`;

const A = '10.0.0.1';

const LONG_BODY = '1234567890\n'.repeat(1 << 16);

const OVERLONG_KEY = 'x'.repeat(65600);

conformanceSuite({
  name: 'limit_req.t',
  http,
  files: { 'long.html': LONG_BODY },
  scenarios: [
    {
      name: 'request, request rejected, request rejected status, rejects not counted',
      steps: [
        // Same millisecond (pipelined): E = 0, 1000 (= burst, nodelay), 2000 > burst.
        {
          at: 0,
          addr: A,
          uri: '/test1.html',
          label: 'request',
          expect: { code: 200, status: 'PASSED', zone: 'one' },
        },
        {
          at: 0,
          addr: A,
          uri: '/test1.html',
          pipelined: true,
          expect: { code: 200, status: 'PASSED', zone: 'one' },
        },
        {
          at: 0,
          addr: A,
          uri: '/test1.html',
          pipelined: true,
          label: 'request rejected',
          expect: { code: 503, status: 'REJECTED', zone: 'one' },
        },
        // 100 ms later: E = 1000 − 200 + 1000 = 1800 > 1000 (state unchanged by the reject).
        {
          at: 100,
          addr: A,
          uri: '/status.html',
          label: 'request rejected status',
          expect: { code: 501, status: 'REJECTED', zone: 'one' },
        },
        // E = 1000 − 400 + 1000 = 1600, twice in the same ms: rejected requests change nothing.
        { at: 200, addr: A, uri: '/test1.html', expect: { code: 503, status: 'REJECTED', zone: 'one' } },
        {
          at: 200,
          addr: A,
          uri: '/test1.html',
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'one' },
        },
        // E = 1000 − 1600 + 1000 = 400 ≤ 1000; had the four rejects counted, E would be far above the burst.
        {
          at: 800,
          addr: A,
          uri: '/test1.html',
          label: 'rejects not counted',
          expect: { code: 200, status: 'PASSED', zone: 'one' },
        },
      ],
      errorLog: [/limiting requests, excess: 2\.000 by zone "one"/],
    },
    {
      name: 'delayed big request not truncated',
      steps: [
        {
          at: 0,
          addr: A,
          uri: '/long.html',
          expect: { code: 200, status: 'PASSED', bodyBytes: LONG_BODY.length },
        },
        // E = 1000 − 2·100 = 800 ≤ burst 5000 → delayed 800·1000/2000 = 400 ms.
        {
          at: 100,
          addr: A,
          uri: '/long.html',
          label: 'delayed big request not truncated',
          expect: { code: 200, status: 'DELAYED', delayMs: 400, zone: 'long', bodyBytes: LONG_BODY.length },
        },
      ],
      errorLog: [/delaying request, excess: [01]\.\d{3}, by zone "long"/],
    },
    {
      name: 'negative excess',
      steps: [
        { at: 0, addr: A, uri: '/fast.html', expect: { code: 200, status: 'PASSED', zone: 'fast' } },
        // E = 0 − 1000·100 + 1000 < 0 → clamped to 0: passed, not delayed.
        {
          at: 100,
          addr: A,
          uri: '/fast.html',
          label: 'negative excess',
          expect: { code: 200, status: 'PASSED', zone: 'fast' },
        },
      ],
    },
    {
      name: 'key passed; an overlong key is not limited (nginx fails open)',
      steps: [
        {
          at: 0,
          addr: A,
          uri: '/keyreq.html',
          headers: { 'X-Key': 'short' },
          label: 'key passed',
          expect: { code: 200, status: 'PASSED', zone: 'key' },
        },
        // Accounted, the second of these same-ms requests would be DELAYED (E = 1000 ≤ burst); a key over
        // 65535 bytes is skipped instead, so $limit_req_status stays unset.
        {
          at: 100,
          addr: A,
          uri: '/keyreq.html',
          headers: { 'X-Key': OVERLONG_KEY },
          label: 'overlong key',
          expect: { code: 200, status: '', zone: null },
        },
        {
          at: 100,
          addr: A,
          uri: '/keyreq.html',
          headers: { 'X-Key': OVERLONG_KEY },
          pipelined: true,
          expect: { code: 200, status: '', zone: null },
        },
      ],
      errorLog: [/the value of the "\$http_x_key" key is more than 65535 bytes: "x{10}/],
    },
  ],
});
