/**
 * `limit_req_status`: any code 400..599 answers a rejection; 444 closes the connection without a
 * response (simulate reports code 444); a dry run never rejects, so it never closes either.
 */
import { conformanceCase } from '../helpers/conformance-case.ts';

conformanceCase({
  name: 'limit_req_status 429 and 444',
  http: (port) => `
    limit_req_zone $binary_remote_addr zone=z429:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=z444:1m rate=1r/m;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location /busy {
            limit_req zone=z429;
            limit_req_status 429;
        }
        location /drop {
            limit_req zone=z444;
            limit_req_status 444;
        }
        location /drop-dry {
            limit_req zone=z444;
            limit_req_status 444;
            limit_req_dry_run on;
        }
    }
`,
  steps: [
    { at: 0, addr: '10.0.9.1', uri: '/busy.html', expect: { code: 200, status: 'PASSED', zone: 'z429' } },
    {
      at: 0,
      addr: '10.0.9.1',
      uri: '/busy.html',
      pipelined: true,
      expect: { code: 429, status: 'REJECTED', zone: 'z429' },
    },
    { at: 50, addr: '10.0.9.2', uri: '/drop.html', expect: { code: 200, status: 'PASSED', zone: 'z444' } },
    {
      at: 50,
      addr: '10.0.9.2',
      uri: '/drop.html',
      pipelined: true,
      expect: { code: 444, status: 'REJECTED', zone: 'z444' },
    },
    // E ≈ 1997 > 0 again: the rejection committed nothing, and it closes a fresh connection too.
    { at: 150, addr: '10.0.9.2', uri: '/drop.html', expect: { code: 444, status: 'REJECTED', zone: 'z444' } },
    {
      at: 250,
      addr: '10.0.9.2',
      uri: '/drop-dry.html',
      expect: { code: 200, status: 'REJECTED_DRY_RUN', zone: 'z444' },
    },
  ],
  errorLog: [/limiting requests, excess: 1\.000 by zone "z429"/],
});
