/**
 * Location selection: `=` first; then the longest prefix; `^~` on it stops regex checks; otherwise the
 * regexes nested in that prefix, then the outer regexes in config order, and the first match wins.
 * Each location has its own zone (1r/m) and its own `limit_req_status`, so the second request of each
 * same-millisecond pair is rejected with a code that names the location that took it.
 */
import { conformanceCase, type Step } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    limit_req_zone $binary_remote_addr zone=l_exact:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_exact_prefix:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_noregex:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_root:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_images:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_png:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_png_gif_caseless:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_outer:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=l_inner_txt:1m rate=1r/m;

    server {
        listen 127.0.0.1:${port};
        server_name localhost;

        location = /exact.html {
            limit_req zone=l_exact;
            limit_req_status 429;
        }
        location /exact.html {
            limit_req zone=l_exact_prefix;
            limit_req_status 502;
        }
        location ^~ /static/ {
            limit_req zone=l_noregex;
            limit_req_status 503;
        }
        location / {
            limit_req zone=l_root;
            limit_req_status 504;
        }
        location /images/ {
            limit_req zone=l_images;
            limit_req_status 507;
        }
        location ~ \\.png$ {
            limit_req zone=l_png;
            limit_req_status 409;
        }
        location ~* \\.(png|gif)$ {
            limit_req zone=l_png_gif_caseless;
            limit_req_status 410;
        }
        location /nested/ {
            limit_req zone=l_outer;
            limit_req_status 411;

            location ~ \\.txt$ {
                limit_req zone=l_inner_txt;
                limit_req_status 412;
            }
            location /nested/deep/ {
            }
        }
    }
`;

/** Two requests in one ms from a client of their own: passed, then rejected by the location's zone. */
function probe(index: number, uri: string, zone: string, code: number, label: string): Step[] {
  const at = index * 20;
  const addr = `10.0.7.${index + 1}`;
  return [
    { at, addr, uri, label, expect: { code: 200, status: 'PASSED', zone } },
    { at, addr, uri, pipelined: true, expect: { code, status: 'REJECTED', zone } },
  ];
}

conformanceCase({
  name: 'location matching: =, ^~, longest prefix, regex order, nested',
  http,
  steps: [
    ...probe(0, '/exact.html', 'l_exact', 429, '= beats the identical prefix'),
    ...probe(1, '/exact.html?v=1', 'l_exact', 429, '= ignores the query string'),
    ...probe(2, '/exact.html.bak', 'l_exact_prefix', 502, 'longest prefix'),
    ...probe(3, '/static/logo.png', 'l_noregex', 503, '^~ stops the regex search'),
    ...probe(4, '/images/logo.png', 'l_png', 409, 'a regex beats the longest prefix'),
    ...probe(5, '/images/logo.gif', 'l_png_gif_caseless', 410, 'regexes in order, first match'),
    ...probe(6, '/other/LOGO.PNG', 'l_png_gif_caseless', 410, '~ is case-sensitive, ~* is not'),
    ...probe(7, '/images/photo.jpg', 'l_images', 507, 'no regex: the longest prefix'),
    ...probe(8, '/index.html', 'l_root', 504, 'the / prefix'),
    ...probe(9, '/nested/readme.txt', 'l_inner_txt', 412, 'a nested regex wins'),
    ...probe(10, '/nested/deep/page.html', 'l_outer', 411, 'a nested prefix inherits'),
    ...probe(11, '/nested/page.png', 'l_png', 409, 'outer regexes after the nested ones'),
  ],
});
