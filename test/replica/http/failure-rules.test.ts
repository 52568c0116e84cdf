import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_PROXY_RULES,
  type NextUpstreamCondition,
  type ProxyRules,
} from '../../../src/engine/http/proxy-rules.ts';
import {
  againOnSameServer,
  clientsFailure,
  mayTryNext,
  nextAfterStatus,
  phaseOf,
  type TryFacts,
} from '../../../src/replica/http/upstream/failure-rules.ts';
import {
  CONNECTING,
  READING_BODY,
  READING_HEADER,
  SENDING,
  UpstreamFailure,
} from '../../../src/replica/http/wire/upstream-failure.ts';

const refused = new UpstreamFailure('system', 'connect ECONNREFUSED', 'ECONNREFUSED', 'connect');
const reset = new UpstreamFailure('system', 'read ECONNRESET', 'ECONNRESET', 'read');
const readTimeout = new UpstreamFailure('read-timeout');
const invalid = new UpstreamFailure('invalid-response', 'Invalid header token', 'HPE_INVALID_HEADER_TOKEN');
const facts = (over: Partial<TryFacts> = {}): TryFacts => ({
  method: 'GET',
  bodyStreamed: false,
  tried: 1,
  servers: 2,
  reusedConnection: false,
  rules: DEFAULT_PROXY_RULES,
  elapsedMs: 0,
  ...over,
});

/** `proxy_next_upstream` with these conditions, and the other rules given. */
const rules = (conditions: NextUpstreamCondition[], over: Partial<ProxyRules> = {}): ProxyRules => ({
  ...DEFAULT_PROXY_RULES,
  nextUpstream: new Set(conditions),
  ...over,
});

describe('what an upstream failure comes to', () => {
  it('the client is at fault for a request that cannot go out (400) or a client gone (499)', () => {
    assert.equal(clientsFailure(new UpstreamFailure('unsendable'), false), 400);
    assert.equal(clientsFailure(reset, true), 499);
    assert.equal(clientsFailure(reset, false), null);
  });

  it('the phase is how far the request got: a refused connection is always connecting', () => {
    assert.equal(phaseOf(reset, { connected: false, sent: false, status: 0 }), CONNECTING);
    assert.equal(phaseOf(refused, { connected: true, sent: true, status: 200 }), CONNECTING);
    assert.equal(phaseOf(reset, { connected: true, sent: false, status: 0 }), SENDING);
    assert.equal(phaseOf(reset, { connected: true, sent: true, status: 0 }), READING_HEADER);
    assert.equal(phaseOf(reset, { connected: true, sent: true, status: 200 }), READING_BODY);
  });

  it('another server is tried after an error or a timeout, once each, not after an invalid head', () => {
    assert.equal(mayTryNext(reset, READING_HEADER, facts()), true);
    assert.equal(mayTryNext(readTimeout, READING_HEADER, facts()), true);
    assert.equal(mayTryNext(reset, READING_HEADER, facts({ tried: 2 })), false);
    assert.equal(mayTryNext(invalid, READING_HEADER, facts()), false);
  });

  it('once connected, not for POST, LOCK, PATCH nor a body that streamed; before it, always', () => {
    for (const method of ['POST', 'LOCK', 'PATCH']) {
      assert.equal(mayTryNext(reset, SENDING, facts({ method })), false, method);
      assert.equal(mayTryNext(refused, CONNECTING, facts({ method })), true, method);
    }
    assert.equal(mayTryNext(reset, SENDING, facts({ bodyStreamed: true })), false);
    assert.equal(mayTryNext(reset, SENDING, facts({ method: 'PUT' })), true);
  });

  it('proxy_next_upstream names the conditions; non_idempotent lets a POST go on; off stops all', () => {
    const headers = facts({ rules: rules(['error', 'invalid_header']) });
    assert.equal(mayTryNext(invalid, READING_HEADER, headers), true);
    assert.equal(mayTryNext(readTimeout, READING_HEADER, headers), false, 'timeout not named');
    const post = { method: 'POST' };
    assert.equal(
      mayTryNext(reset, SENDING, facts({ ...post, rules: rules(['error', 'non_idempotent']) })),
      true,
    );
    assert.equal(mayTryNext(refused, CONNECTING, facts({ rules: rules(['error', 'off']) })), false);
  });

  it('proxy_next_upstream_tries and _timeout bound the tries', () => {
    const three = { servers: 3, tried: 2 };
    assert.equal(mayTryNext(reset, READING_HEADER, facts(three)), true);
    assert.equal(
      mayTryNext(
        reset,
        READING_HEADER,
        facts({ ...three, rules: rules(['error'], { nextUpstreamTries: 2 }) }),
      ),
      false,
    );
    const timed = rules(['error'], { nextUpstreamTimeoutMs: 1000 });
    assert.equal(mayTryNext(reset, READING_HEADER, facts({ ...three, rules: timed, elapsedMs: 999 })), true);
    assert.equal(
      mayTryNext(reset, READING_HEADER, facts({ ...three, rules: timed, elapsedMs: 1000 })),
      false,
    );
  });

  it('an answer with a status proxy_next_upstream names goes on while a server is left', () => {
    const named = facts({ rules: rules(['error', 'http_404', 'http_503']) });
    assert.equal(nextAfterStatus(404, named), true);
    assert.equal(nextAfterStatus(503, named), true);
    assert.equal(nextAfterStatus(500, named), false, 'not named');
    assert.equal(nextAfterStatus(200, named), false);
    assert.equal(nextAfterStatus(404, { ...named, tried: 2 }), false, 'the last server answers as it does');
    assert.equal(nextAfterStatus(404, { ...named, method: 'POST' }), false, 'a POST went: non_idempotent');
    assert.equal(nextAfterStatus(404, facts()), false, 'the default names no status');
  });

  it('a group of one gets one more try after an error on a reused connection, not a timeout', () => {
    const one = facts({ servers: 1, reusedConnection: true });
    assert.equal(againOnSameServer(reset, SENDING, one), true);
    assert.equal(mayTryNext(reset, SENDING, one), true);
    assert.equal(againOnSameServer(readTimeout, READING_HEADER, one), false);
    assert.equal(againOnSameServer(reset, CONNECTING, one), false);
    assert.equal(mayTryNext(reset, SENDING, facts({ servers: 1 })), false);
  });
});
