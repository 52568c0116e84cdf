/**
 * `rate=1r/m`: nginx stores 1000/60 = 16 milli-requests per second (integer division), so within a
 * few seconds a zone drains almost nothing — every decision below holds for any arrival jitter.
 */
import { conformanceCase } from '../helpers/conformance-case.ts';

const A = '10.0.10.1';
const B = '10.0.10.2';

conformanceCase({
  name: '1r/m: one request per minute, a burst drains by 16 milli-requests per second',
  http: (port) => `
    limit_req_zone $binary_remote_addr zone=per_minute:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=per_minute_burst:1m rate=1r/m;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location / {
            limit_req zone=per_minute;
        }
        location /burst/ {
            limit_req zone=per_minute_burst burst=2 nodelay;
        }
    }
`,
  steps: [
    { at: 0, addr: A, uri: '/index.html', expect: { code: 200, status: 'PASSED', zone: 'per_minute' } },
    {
      at: 0,
      addr: A,
      uri: '/index.html',
      pipelined: true,
      expect: { code: 503, status: 'REJECTED', zone: 'per_minute' },
    },
    ...[0, 1, 2].map((i) => ({
      at: 50,
      addr: B,
      uri: '/burst/a.html',
      pipelined: i > 0,
      expect: { code: 200, status: 'PASSED', zone: 'per_minute_burst' } as const,
    })),
    {
      at: 50,
      addr: B,
      uri: '/burst/a.html',
      pipelined: true,
      expect: { code: 503, status: 'REJECTED', zone: 'per_minute_burst' },
    },
    // 1 s later: E = 0 − 16 + 1000 = 984 > 0.
    { at: 1000, addr: A, uri: '/index.html', expect: { code: 503, status: 'REJECTED', zone: 'per_minute' } },
    // E = 2000 − 16 + 1000 = 2984 > burst 2000.
    {
      at: 1050,
      addr: B,
      uri: '/burst/a.html',
      expect: { code: 503, status: 'REJECTED', zone: 'per_minute_burst' },
    },
  ],
  errorLog: [
    /limiting requests, excess: 0\.9\d\d by zone "per_minute"/,
    /excess: 2\.9\d\d by zone "per_minute_burst"/,
  ],
});
