/**
 * An allowlist with `geo`: listed networks map to an empty key and are never accounted; everyone else
 * is limited per client. `geo` reads the client address after the realip module replaced it.
 */
import { conformanceCase, type Step } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    geo $limited {
        default          1;
        10.1.0.0/16      0;
        192.168.7.7      0;
        2001:db8:ff::/48 0;
    }
    map $limited $limit_key {
        0 "";
        1 $binary_remote_addr;
    }
    limit_req_zone $limit_key zone=per_client:1m rate=10r/s;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location / {
            limit_req zone=per_client burst=1 nodelay;
        }
    }
`;

/** Three requests in one millisecond from `addr`. */
function burst(at: number, addr: string, label: string, limited: boolean): Step[] {
  const outcomes = limited
    ? ([
        { code: 200, status: 'PASSED', zone: 'per_client' },
        { code: 200, status: 'PASSED', zone: 'per_client' },
        { code: 503, status: 'REJECTED', zone: 'per_client' },
      ] as const)
    : ([0, 1, 2].map(() => ({ code: 200, status: '', zone: null })) as Step['expect'][]);
  return outcomes.map((expect, i) => ({
    at,
    addr,
    uri: '/index.html',
    pipelined: i > 0,
    ...(i === 0 ? { label } : {}),
    expect,
  }));
}

conformanceCase({
  name: 'geo allowlist: listed networks are not accounted, others are limited',
  http,
  steps: [
    ...burst(0, '10.1.2.3', 'inside 10.1.0.0/16', false),
    ...burst(20, '10.2.0.1', 'outside the list', true),
    ...burst(40, '192.168.7.7', 'a listed single address', false),
    ...burst(60, '192.168.7.8', 'its neighbour', true),
    ...burst(80, '2001:db8:ff::5', 'inside an IPv6 network', false),
    ...burst(100, '2001:db8:fe::5', 'outside it', true),
  ],
});
