/**
 * Delays: nginx-tests `limit_req_delay.t`, plus default delay, `nodelay` and `delay=N` side by side.
 * With D = delay×1000 (0 by default, ∞ for nodelay) and E the excess after this request, a request is
 * rejected when E > burst×1000, delayed (E − D)·1000/rate ms when E > D, and passed otherwise.
 */
import { conformanceCase, conformanceSuite } from '../helpers/conformance-case.ts';

const A = '10.0.0.1';

conformanceCase({
  name: 'limit_req_delay.t: request, not yet delayed, delayed, rejected',
  http: (port) => `
    limit_req_zone $binary_remote_addr zone=one:1m rate=30r/m;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;

        location / {
            limit_req zone=one delay=1 burst=2;
        }
    }
`,
  // 30r/m = 500 milli/s: 25 drained per 50 ms.
  steps: [
    {
      at: 0,
      addr: A,
      uri: '/delay.html',
      label: 'request',
      expect: { code: 200, status: 'PASSED', zone: 'one' },
    },
    // E = 1000 − 25 = 975 ≤ D = 1000: excess, but inside the delay= window.
    {
      at: 50,
      addr: A,
      uri: '/delay.html',
      label: 'not yet delayed',
      expect: { code: 200, status: 'PASSED', zone: 'one' },
    },
    // E = 975 − 25 + 1000 = 1950 ≤ burst 2000 → delayed (1950 − 1000)·1000/500 = 1900 ms.
    {
      at: 100,
      addr: A,
      uri: '/delay.html',
      label: 'delayed',
      expect: { code: 200, status: 'DELAYED', delayMs: 1900, zone: 'one' },
    },
    // Sent while the previous one waits (it is accounted already): E = 2925 > 2000.
    {
      at: 150,
      addr: A,
      uri: '/delay.html',
      label: 'rejected',
      expect: { code: 503, status: 'REJECTED', zone: 'one' },
    },
  ],
  errorLog: [
    /delaying request, excess: 1\.\d{3}, by zone "one"/,
    /limiting requests, excess: 2\.\d{3} by zone "one"/,
  ],
});

const modes = (port: number) => `
    limit_req_zone $binary_remote_addr zone=default_delay:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=no_delay:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=partial_delay:1m rate=10r/s;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;

        location /default {
            limit_req zone=default_delay burst=2;
        }
        location /nodelay {
            limit_req zone=no_delay burst=5 nodelay;
        }
        location /delay2 {
            limit_req zone=partial_delay burst=3 delay=2;
        }
    }
`;

conformanceSuite({
  name: 'burst: default delay, nodelay, delay=N',
  http: modes,
  scenarios: [
    {
      name: 'default delay: every excess request waits, over the burst is rejected',
      // 1r/s drains 1 per ms; requests 100 ms apart add a net 900: E = 0, 900, 1800, 2700.
      steps: [
        {
          at: 0,
          addr: A,
          uri: '/default.html',
          expect: { code: 200, status: 'PASSED', zone: 'default_delay' },
        },
        {
          at: 100,
          addr: A,
          uri: '/default.html',
          expect: { code: 200, status: 'DELAYED', delayMs: 900, zone: 'default_delay' },
        },
        {
          at: 200,
          addr: A,
          uri: '/default.html',
          expect: { code: 200, status: 'DELAYED', delayMs: 1800, zone: 'default_delay' },
        },
        {
          at: 300,
          addr: A,
          uri: '/default.html',
          expect: { code: 503, status: 'REJECTED', zone: 'default_delay' },
        },
      ],
    },
    {
      name: 'nodelay: the whole burst passes at once, the next request is rejected',
      // Seven requests in one millisecond: E = 0 … 6000; burst 5000.
      steps: [
        ...[0, 1, 2, 3, 4, 5].map((i) => ({
          at: 0,
          addr: A,
          uri: '/nodelay.html',
          pipelined: i > 0,
          expect: { code: 200, status: 'PASSED', zone: 'no_delay' } as const,
        })),
        {
          at: 0,
          addr: A,
          uri: '/nodelay.html',
          pipelined: true,
          expect: { code: 503, status: 'REJECTED', zone: 'no_delay' },
        },
        // 300 ms later the bucket has drained 3000: E = 5000 − 3000 + 1000 = 3000 ≤ 5000.
        { at: 300, addr: A, uri: '/nodelay.html', expect: { code: 200, status: 'PASSED', zone: 'no_delay' } },
      ],
    },
    {
      name: 'delay=2: the first request and two excess pass, the third excess waits',
      steps: [
        // One millisecond: E = 0, 1000, 2000 ≤ D = 2000 pass; E = 3000 waits (3000 − 2000)·1000/10000 = 100 ms.
        {
          at: 0,
          addr: A,
          uri: '/delay2.html',
          expect: { code: 200, status: 'PASSED', zone: 'partial_delay' },
        },
        {
          at: 0,
          addr: A,
          uri: '/delay2.html',
          pipelined: true,
          expect: { code: 200, status: 'PASSED', zone: 'partial_delay' },
        },
        {
          at: 0,
          addr: A,
          uri: '/delay2.html',
          pipelined: true,
          expect: { code: 200, status: 'PASSED', zone: 'partial_delay' },
        },
        {
          at: 0,
          addr: A,
          uri: '/delay2.html',
          pipelined: true,
          expect: { code: 200, status: 'DELAYED', delayMs: 100, zone: 'partial_delay' },
        },
        // E = 3000 − 500 + 1000 = 3500 > burst 3000 (the delayed request was accounted before it waited).
        {
          at: 50,
          addr: A,
          uri: '/delay2.html',
          expect: { code: 503, status: 'REJECTED', zone: 'partial_delay' },
        },
        // E = 3000 − 4000 + 1000 → 0.
        {
          at: 400,
          addr: A,
          uri: '/delay2.html',
          expect: { code: 200, status: 'PASSED', zone: 'partial_delay' },
        },
      ],
    },
  ],
});
