/**
 * Dry run: nginx-tests `limit_req_dry_run.t`, plus the accounting rule behind it — a dry run enforces
 * nothing (no wait, no reject) but accounts exactly as usual, so would-be rejections change no state.
 * `simulate` reports `delay_ms` 0 for DELAYED_DRY_RUN: nginx holds such a request for no time at all.
 */
import { conformanceCase } from '../helpers/conformance-case.ts';

const A = '10.0.0.1';

conformanceCase({
  name: 'limit_req_dry_run.t: dry run, not delayed, not rejected, dry run off - rejected',
  http: (port) => `
    limit_req_zone  $binary_remote_addr  zone=one:1m   rate=1r/m;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;

        limit_req_dry_run  on;

        location /delay {
            limit_req    zone=one  burst=2;
        }

        location /reject {
            limit_req    zone=one;
        }

        location /reject/off {
            limit_req    zone=one;

            limit_req_dry_run off;
        }
    }
`,
  // 1r/m = 16 milli/s: E grows by ~1000 per request whatever the gaps.
  steps: [
    {
      at: 0,
      addr: A,
      uri: '/delay.html',
      label: 'dry run',
      expect: { code: 200, status: 'PASSED', zone: 'one' },
    },
    // E ≈ 999 ≤ burst: would wait; accounted (committed), not delayed.
    {
      at: 100,
      addr: A,
      uri: '/delay.html',
      label: 'dry run - not delayed',
      expect: { code: 200, status: 'DELAYED_DRY_RUN', zone: 'one' },
    },
    // E ≈ 1998 > 0 (no burst here): would be rejected; served.
    {
      at: 200,
      addr: A,
      uri: '/reject.html',
      label: 'dry run - not rejected',
      expect: { code: 200, status: 'REJECTED_DRY_RUN', zone: 'one' },
    },
    {
      at: 300,
      addr: A,
      uri: '/reject/off.html',
      label: 'dry run off - rejected',
      expect: { code: 503, status: 'REJECTED', zone: 'one' },
    },
  ],
  errorLog: [
    /\[warn\] .*delaying request, dry run, excess: (0\.99\d|1\.000), by zone "one"/,
    /\[error\] .*limiting requests, dry run, excess: (1\.99\d|2\.000) by zone "one"/,
    /\[error\] .*limiting requests, excess: (1\.99\d|2\.000) by zone "one"/,
  ],
});

conformanceCase({
  name: 'dry run: would-be rejections are not accounted',
  http: (port) => `
    limit_req_zone $binary_remote_addr zone=trial:1m rate=1r/s;

    server {
        listen       127.0.0.1:${port};
        server_name  localhost;

        location / {
            limit_req zone=trial burst=1;
            limit_req_dry_run on;
        }
    }
`,
  // 1r/s drains 1 per ms.
  steps: [
    { at: 0, addr: A, uri: '/t.html', expect: { code: 200, status: 'PASSED', zone: 'trial' } },
    // E = 1000 − 100 = 900 ≤ burst: committed, would wait 900 ms, does not.
    { at: 100, addr: A, uri: '/t.html', expect: { code: 200, status: 'DELAYED_DRY_RUN', zone: 'trial' } },
    // E = 900 − 100 + 1000 = 1800 > burst: would be rejected, so not committed.
    { at: 200, addr: A, uri: '/t.html', expect: { code: 200, status: 'REJECTED_DRY_RUN', zone: 'trial' } },
    // E = 900 − 1300 + 1000 = 600 (had the reject been committed: 1800 − 1200 + 1000 = 1600 > burst).
    { at: 1400, addr: A, uri: '/t.html', expect: { code: 200, status: 'DELAYED_DRY_RUN', zone: 'trial' } },
  ],
});
