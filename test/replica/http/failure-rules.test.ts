import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  againOnSameServer,
  clientsFailure,
  mayTryNext,
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

  it('a group of one gets one more try after an error on a reused connection, not a timeout', () => {
    const one = facts({ servers: 1, reusedConnection: true });
    assert.equal(againOnSameServer(reset, SENDING, one), true);
    assert.equal(mayTryNext(reset, SENDING, one), true);
    assert.equal(againOnSameServer(readTimeout, READING_HEADER, one), false);
    assert.equal(againOnSameServer(reset, CONNECTING, one), false);
    assert.equal(mayTryNext(reset, SENDING, facts({ servers: 1 })), false);
  });
});
