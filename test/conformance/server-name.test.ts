/**
 * Virtual server selection by `Host`: exact name, then the longest leading wildcard, then the longest
 * trailing wildcard, then the first matching regex, else the `default_server` of the listen socket.
 * Each server has its own zone (1r/m) and `limit_req_status`, so the second request of each
 * same-millisecond pair is rejected with a code that names the server that took it.
 */
import { conformanceCase, type Step } from '../helpers/conformance-case.ts';

const server = (port: number, names: string, zone: string, code: number, extra = '') => `
    server {
        listen 127.0.0.1:${port}${extra};
        server_name ${names};
        limit_req zone=${zone};
        limit_req_status ${code};
    }`;

const http = (port: number) => `
    limit_req_zone $binary_remote_addr zone=s_first:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_exact:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_lead:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_lead_longer:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_trail:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_regex:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=s_default:1m rate=1r/m;
${server(port, 'first.example', 's_first', 502)}
${server(port, 'exact.example.com', 's_exact', 409)}
${server(port, '*.example.com', 's_lead', 410)}
${server(port, '*.eu.example.com', 's_lead_longer', 411)}
${server(port, 'www.example.*', 's_trail', 412)}
${server(port, '~^(api\\d+|www)\\.example\\.org$', 's_regex', 429)}
${server(port, 'default.example', 's_default', 507, ' default_server')}
`;

function probe(index: number, host: string, zone: string, code: number, label: string): Step[] {
  const at = index * 20;
  const addr = `10.0.8.${index + 1}`;
  return [
    { at, addr, host, uri: '/index.html', label, expect: { code: 200, status: 'PASSED', zone } },
    { at, addr, host, uri: '/index.html', pipelined: true, expect: { code, status: 'REJECTED', zone } },
  ];
}

conformanceCase({
  name: 'server_name selection: exact, wildcards, regex, default_server',
  http,
  steps: [
    ...probe(0, 'exact.example.com', 's_exact', 409, 'exact beats *.example.com'),
    ...probe(1, 'EXACT.Example.COM', 's_exact', 409, 'names are case-insensitive'),
    ...probe(2, 'exact.example.com:8080', 's_exact', 409, 'the port in Host is ignored'),
    ...probe(3, 'exact.example.com.', 's_exact', 409, 'a trailing dot is ignored'),
    ...probe(4, 'shop.example.com', 's_lead', 410, 'leading wildcard'),
    ...probe(5, 'www.example.com', 's_lead', 410, 'leading wildcard beats trailing wildcard'),
    ...probe(6, 'shop.eu.example.com', 's_lead_longer', 411, 'the longest leading wildcard'),
    ...probe(7, 'www.example.net', 's_trail', 412, 'trailing wildcard'),
    ...probe(8, 'www.example.org', 's_trail', 412, 'trailing wildcard beats a regex'),
    ...probe(9, 'api42.example.org', 's_regex', 429, 'regex'),
    ...probe(10, 'first.example', 's_first', 502, 'the first server by name'),
    ...probe(11, 'unknown.test', 's_default', 507, 'no match: default_server, not the first server'),
  ],
});
