import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessLogParser } from '../../../src/cli/replay/access-log-parser.ts';
import { unloggedVariables } from '../../../src/cli/replay/unlogged-variables.ts';
import { findLogFormat, loadConfigText } from '../../../src/config/index.ts';

const http = loadConfigText(
  `events {}
http {
    log_format keyed '$remote_addr [$time_local] "$request" $host "$http_x_api_key"';
    map $http_x_api_key $api_key { default $http_x_api_key; "" $cookie_session; }
    map $http_x_tier $tier { default $http_user_agent; }
    limit_req_zone $api_key zone=api:1m rate=1r/s;
    limit_req_zone $tier$http_host zone=tier:1m rate=1r/s;
    server { listen 8081; location / { limit_req zone=api; limit_req zone=tier; } }
}
`,
  'test.conf',
).http;
const parserFor = (name: string) => new AccessLogParser(findLogFormat(http.logFormats, name)!);

describe('unlogged variables', () => {
  it('names the header fields the limits and their maps read that the format lacks, and cookies', () => {
    // combined has User-Agent and Referer, no Host, no X-Api-Key, no X-Tier
    assert.deepEqual(unloggedVariables(http, parserFor('combined')), [
      '$cookie_session',
      '$http_host',
      '$http_x_api_key',
      '$http_x_tier',
    ]);
    // keyed has $host (Host) and X-Api-Key, not User-Agent or X-Tier
    assert.deepEqual(unloggedVariables(http, parserFor('keyed')), [
      '$cookie_session',
      '$http_user_agent',
      '$http_x_tier',
    ]);
  });
});
