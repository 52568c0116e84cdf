/**
 * The variables read after the decision, as ngx_http_upstream.c and ngx_http_variables.c print them:
 * the states joined with `, ` within one upstream and ` : ` across an internal redirect (whose own
 * entry prints nothing), `-` for a time never reached, `$upstream_http_*`'s first field by its name
 * with `-` read as `_`, `$upstream_cookie_*` from the first Set-Cookie line that starts with the name,
 * `$status` in three digits; all of them read afresh each time (non-cacheable).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newRequestContext, type RequestFacts } from '../../src/engine/variables/request-context.ts';
import {
  newUpstreamState,
  type RequestProgress,
  type UpstreamState,
} from '../../src/engine/variables/request-progress.ts';
import { VariableTable } from '../../src/engine/variables/variable-table.ts';

function state(peer: string | null, fields: Partial<UpstreamState> = {}): UpstreamState {
  return { ...newUpstreamState(peer), ...fields };
}

function read(name: string, progress: RequestProgress, facts: Partial<RequestFacts> = {}): string {
  const table = new VariableTable();
  const get = table.reader(name);
  const all: RequestFacts = {
    method: 'GET',
    scheme: 'http',
    target: '/',
    headers: {},
    remoteAddr: '127.0.0.1',
    remotePort: 1,
    serverAddr: '127.0.0.1',
    serverPort: 80,
    progress,
    ...facts,
  };
  const ctx = newRequestContext(all, { uri: '/', args: '', hasArgs: false }, 'h', 'h', 0, table.slots);
  return get(ctx);
}

function progress(fields: Partial<RequestProgress>): RequestProgress {
  return { upstreamStates: [], upstreamHeaders: null, elapsedMs: 0, status: 0, ...fields };
}

describe('late variables', () => {
  const tried = [
    state('10.0.0.1:80', { status: 502, connectMs: 1, responseMs: 1002 }),
    state('10.0.0.2:80', { status: 200, connectMs: 0, headerMs: 15, responseLength: 7 }),
    state(null),
    state('10.0.0.3:80', { status: 404, connectMs: 2, headerMs: 3, responseMs: 4 }),
  ];

  test('joined within an upstream and across a redirect', () => {
    const p = progress({ upstreamStates: tried });
    assert.equal(read('upstream_addr', p), '10.0.0.1:80, 10.0.0.2:80 : 10.0.0.3:80');
    assert.equal(read('upstream_status', p), '502, 200 : 404');
    assert.equal(read('upstream_connect_time', p), '0.001, 0.000 : 0.002');
    assert.equal(read('upstream_header_time', p), '-, 0.015 : 0.003');
    assert.equal(read('upstream_response_time', p), '1.002, - : 0.004');
    assert.equal(read('upstream_response_length', p), '0, 7 : 0');
  });

  test('nothing tried: empty (not found)', () => {
    assert.equal(read('upstream_addr', progress({})), '');
    assert.equal(read('upstream_status', progress({})), '');
  });

  test('the answer head: a field by its name, a Set-Cookie value', () => {
    const upstreamHeaders = ['X-Up_Field', 'u', 'X-Up-Field', 'first', 'x-up-field', 'second'];
    const cookies = ['Set-Cookie', 'ab=no', 'Set-Cookie', 'A = 1 ; Path=/', 'Set-Cookie', 'c'];
    const p = progress({ upstreamHeaders: [...upstreamHeaders, ...cookies] });
    assert.equal(read('upstream_http_x_up_field', p), 'u');
    assert.equal(read('upstream_http_x_missing', p), '');
    assert.equal(read('upstream_cookie_a', p), '1 ');
    assert.equal(read('upstream_cookie_c', p), '');
  });

  test('$status, $request_time, the connection', () => {
    assert.equal(read('status', progress({ status: 204 })), '204');
    assert.equal(read('status', progress({})), '000');
    assert.equal(read('request_time', progress({ elapsedMs: 61_005 })), '61.005');
    const facts = { connectionNumber: 7, connectionRequests: 3, connectionMs: 1500.7 };
    assert.equal(read('connection', progress({}), facts), '7');
    assert.equal(read('connection_requests', progress({}), facts), '3');
    assert.equal(read('connection_time', progress({}), facts), '1.500');
  });

  test('$sent_http_connection and $sent_http_keep_alive once the answer is out', () => {
    const kept = progress({ status: 200, keepAlive: true, keepAliveHeaderS: 9 });
    assert.equal(read('sent_http_connection', kept), 'keep-alive');
    assert.equal(read('sent_http_keep_alive', kept), 'timeout=9');
    assert.equal(read('sent_http_keep_alive', progress({ keepAlive: true, keepAliveHeaderS: null })), '');
    assert.equal(read('sent_http_connection', progress({ status: 200 })), 'close');
    assert.equal(read('sent_http_connection', progress({ status: 101, keepAlive: true })), 'upgrade');
  });

  test('$sent_http_NAME: the first field so named; Cache-Control and Link all joined; Server and Date never', () => {
    const sent = progress({
      sentHeaders: [
        'Server',
        'nginx',
        'Cache-Control',
        'max-age=3600',
        'X-Two-Words',
        'a',
        'x-two-words',
        'b',
        'Cache-Control',
        'private',
        'Link',
        '</a>',
        'Link',
        '</b>',
        'Date',
        'today',
      ],
    });
    assert.equal(read('sent_http_cache_control', sent), 'max-age=3600, private');
    assert.equal(read('sent_http_link', sent), '</a>, </b>');
    assert.equal(read('sent_http_x_two_words', sent), 'a');
    assert.equal(read('sent_http_server', sent), '');
    assert.equal(read('sent_http_date', sent), '');
    assert.equal(read('sent_http_cache_control', progress({})), '');
  });

  test("$limit_rate: `set $limit_rate`'s, else the rate the answer went at, else 0", () => {
    assert.equal(read('limit_rate', progress({})), '0');
    assert.equal(read('limit_rate', progress({ limitRate: 40960 })), '40960');
    const table = new VariableTable();
    const get = table.reader('limit_rate');
    const facts = { method: 'GET', scheme: 'http', target: '/', headers: {} } as unknown as RequestFacts;
    const ctx = newRequestContext(facts, { uri: '/', args: '', hasArgs: false }, 'h', 'h', 0, table.slots);
    ctx.limitRate = 1024;
    assert.equal(get(ctx), '1024');
    ctx.limitRate = 2048;
    assert.equal(get(ctx), '2048');
  });

  test('read afresh each time', () => {
    const table = new VariableTable();
    const get = table.reader('upstream_status');
    const states: UpstreamState[] = [];
    const facts: RequestFacts = {
      method: 'GET',
      scheme: 'http',
      target: '/',
      headers: {},
      remoteAddr: '127.0.0.1',
      remotePort: 1,
      serverAddr: '127.0.0.1',
      serverPort: 80,
      progress: progress({ upstreamStates: states }),
    };
    const ctx = newRequestContext(facts, { uri: '/', args: '', hasArgs: false }, 'h', 'h', 0, table.slots);
    assert.equal(get(ctx), '');
    states.push(state('10.0.0.1:80', { status: 200 }));
    assert.equal(get(ctx), '200');
  });
});
