/**
 * `expires`, `limit_rate`, `limit_rate_after` and `set $limit_rate` as the config reads them: each
 * level's own or the enclosing one's, values with variables kept for the request, nginx's refusals
 * with the line, in a location's `if` too; what the replica does not honour (`proxy_limit_rate`) refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const FILE = 'test.conf';
const server = (body: string) => `server { listen 80; ${body} }`;

test('each the innermost level that sets it, one by one', () => {
  const http = loadHttp(
    `expires 1h; limit_rate 40k; ${server('limit_rate_after 1m; location / { expires epoch; } location /v { limit_rate $arg_l; expires modified $arg_e; } location /i { }')}`,
    FILE,
  );
  const [plain, variable, inherited] = http.servers[0]!.locations;
  assert.equal(plain!.answer.expires.kind, 'epoch');
  assert.deepEqual(plain!.answer.limitRate?.parts, [{ text: '40k' }]);
  assert.deepEqual(plain!.answer.limitRateAfter?.parts, [{ text: '1m' }]);
  assert.deepEqual(variable!.answer.limitRate?.parts, [{ variable: 'arg_l' }]);
  assert.equal(variable!.answer.expires.kind, 'modified');
  assert.notEqual(variable!.answer.expires.value, null);
  assert.deepEqual(
    { kind: inherited!.answer.expires.kind, timeS: inherited!.answer.expires.timeS },
    { kind: 'access', timeS: 3600 },
  );
});

test("nginx's refusals, with the line", () => {
  const cases: [string, string][] = [
    ['expires 1h; expires 2h;', '"expires" directive is duplicate'],
    ['expires soon;', '"expires" directive invalid value'],
    ['expires later 1h;', '"expires" directive invalid value'],
    ['expires modified epoch;', '"expires" directive invalid value'],
    ['expires modified @1h;', '"expires" directive daily time cannot be used with "modified" parameter'],
    ['expires @25h;', '"expires" directive daily time value must be less than 24 hours'],
    ['limit_rate 1g;', '"limit_rate" directive invalid value'],
    ['limit_rate_after 1k; limit_rate_after 2k;', '"limit_rate_after" directive is duplicate'],
    ['proxy_limit_rate 1k;', '"proxy_limit_rate" directive is not supported by limitswitch'],
    ['if ($arg_a) { limit_rate 1k; }', '"limit_rate" directive is not allowed here'],
    ['location / { if ($arg_a) { expires 1h; expires 2h; } }', '"expires" directive is duplicate'],
    [
      'location / { if ($arg_a) { limit_rate 1k 2k; } }',
      'invalid number of arguments in "limit_rate" directive',
    ],
  ];
  for (const [body, message] of cases)
    assert.equal(
      httpLoadError(server(body), FILE).replace(/ in test\.conf:\d+$/, ''),
      `[emerg] ${message}`,
      body,
    );
  assert.match(httpLoadError(server('expires soon;'), FILE), / in test\.conf:3$/);
});

test("in a location's if: the block's own settings over the location's, each on its own", () => {
  const http = loadHttp(
    server('location / { limit_rate 40k; expires 1h; if ($arg_a) { limit_rate_after 1k; expires epoch; } }'),
    FILE,
  );
  const block = http.servers[0]!.locations[0]!.script[0]!;
  assert.equal(block.op, 'if');
  assert.deepEqual(block.op === 'if' && block.answer?.limitRateAfter?.parts, [{ text: '1k' }]);
  assert.equal(block.op === 'if' && block.answer?.expires?.kind, 'epoch');
  assert.equal(block.op === 'if' && block.answer?.limitRate, undefined);
});

test("set $limit_rate is read (the request's rate), set $args is still refused", () => {
  const http = loadHttp(
    server('location / { set $limit_rate 10k; if ($arg_a) { set $limit_rate $arg_a; } }'),
    FILE,
  );
  const set = http.servers[0]!.locations[0]!.script[0]!;
  assert.equal(set.op === 'set' && set.variable, 'limit_rate');
  assert.deepEqual(set.op === 'set' && set.value.parts, [{ text: '10k' }]);
  assert.match(httpLoadError(server('set $args a=1;'), FILE), /"set \$args" is not supported by limitswitch/);
});
