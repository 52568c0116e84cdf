import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type AlertEvent,
  decodeKeyState,
  encodeKeyState,
  type KeyState,
  onDue,
  onFiring,
  onResolved,
  type Plan,
} from '../../src/automation/key-state.ts';
import type { KeyvalEntry } from '../../src/store/keyval-store.ts';

const T0 = 1_700_000_000_000;

function event(rule: string, fingerprint: string, extra: Partial<AlertEvent> = {}): AlertEvent {
  return {
    rule,
    alertname: 'CoffeeOverloaded',
    fingerprint,
    value: '1',
    onResolve: 'delete',
    ttlMs: 600_000,
    minHoldMs: 0,
    ...extra,
  };
}

/** A key and its record, changed the way `AlertAutomation` carries out plans. */
class Key {
  state: KeyState | null = null;
  current: KeyvalEntry | null;

  constructor(initial: KeyvalEntry | null = null) {
    this.current = initial;
  }

  apply(plan: Plan): Plan {
    if (plan.state !== undefined) this.state = plan.state;
    if (plan.write?.op === 'set') this.current = plan.write.entry;
    if (plan.write?.op === 'delete') this.current = null;
    return plan;
  }

  fire(e: AlertEvent, nowMs = T0): Plan {
    return this.apply(onFiring(this.state, this.current, e, nowMs));
  }

  resolve(e: AlertEvent, nowMs = T0): Plan {
    return this.apply(onResolved(this.state, this.current, e, nowMs));
  }
}

describe('key state: one alert', () => {
  it('firing sets the value with the TTL; a re-sent firing only refreshes the TTL', () => {
    const key = new Key();
    const first = key.fire(event('coffee', 'f1'));
    assert.equal(first.action, 'set');
    assert.deepEqual(key.current, { value: '1', expireAtMs: T0 + 600_000 });
    const again = key.fire(event('coffee', 'f1'), T0 + 60_000);
    assert.equal(again.action, 'refresh');
    assert.deepEqual(key.current, { value: '1', expireAtMs: T0 + 660_000 });
    assert.deepEqual(Object.keys(key.state!.holders), ['coffee/f1']);
  });

  it('resolved deletes; a re-sent resolved changes nothing', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1'));
    const resolved = key.resolve(event('coffee', 'f1'));
    assert.deepEqual([resolved.action, resolved.old, resolved.new], ['delete', '1', null]);
    assert.equal(key.current, null);
    assert.equal(key.state, null);
    const again = key.resolve(event('coffee', 'f1'));
    assert.deepEqual([again.action, again.write, again.state], ['none', null, undefined]);
  });

  it('restore puts back the value and expiry from before the alert', () => {
    const key = new Key({ value: '0', expireAtMs: null });
    key.fire(event('coffee', 'f1', { onResolve: 'restore' }));
    assert.equal(key.current?.value, '1');
    const resolved = key.resolve(event('coffee', 'f1', { onResolve: 'restore' }));
    assert.deepEqual([resolved.action, resolved.old, resolved.new], ['restore', '1', '0']);
    assert.deepEqual(key.current, { value: '0', expireAtMs: null });
  });

  it('restore of a key that was absent, or whose old expiry has passed, deletes it', () => {
    const absent = new Key();
    absent.fire(event('coffee', 'f1', { onResolve: 'restore' }));
    assert.equal(absent.resolve(event('coffee', 'f1', { onResolve: 'restore' })).action, 'restore');
    assert.equal(absent.current, null);
    const expiring = new Key({ value: '0', expireAtMs: T0 + 1000 });
    expiring.fire(event('coffee', 'f1', { onResolve: 'restore' }));
    const plan = expiring.resolve(event('coffee', 'f1', { onResolve: 'restore' }), T0 + 1000);
    assert.deepEqual([plan.action, plan.write], ['restore', { op: 'delete' }]);
  });

  it('a key changed by someone else is left as they left it', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1'));
    key.current = { value: '0', expireAtMs: null };
    const plan = key.resolve(event('coffee', 'f1'));
    assert.deepEqual([plan.action, plan.write, plan.state], ['left', null, null]);
    assert.deepEqual(key.current, { value: '0', expireAtMs: null });
  });

  it('while the alert fires, a re-sent notification sets the value again if someone changed it', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1'));
    key.current = null;
    const plan = key.fire(event('coffee', 'f1'));
    assert.deepEqual([plan.action, plan.old, plan.new], ['set', null, '1']);
    assert.deepEqual(plan.write, { op: 'set', entry: { value: '1', expireAtMs: T0 + 600_000 } });
  });
});

describe('key state: overlapping alerts', () => {
  it('stays set until the last holder resolves; the first value wins', () => {
    const key = new Key({ value: '0', expireAtMs: null });
    key.fire(event('coffee', 'f1', { onResolve: 'restore' }));
    const second = key.fire(event('tea', 'f2', { value: '2', onResolve: 'restore' }), T0 + 1000);
    assert.equal(second.action, 'refresh');
    assert.equal(key.current?.value, '1');
    assert.equal(key.resolve(event('coffee', 'f1', { onResolve: 'restore' })).action, 'none');
    assert.equal(key.current?.value, '1');
    assert.equal(key.resolve(event('tea', 'f2', { onResolve: 'restore' })).action, 'restore');
    assert.deepEqual(key.current, { value: '0', expireAtMs: null });
  });

  it('the TTL is the longest any holder asked for', () => {
    const key = new Key();
    key.fire(event('long', 'f1', { ttlMs: 3_600_000 }));
    key.fire(event('short', 'f2', { ttlMs: 60_000 }), T0 + 1000);
    assert.equal(key.current?.expireAtMs, T0 + 3_600_000);
    assert.equal(key.state?.expireAtMs, T0 + 3_600_000);
  });
});

describe('key state: min_hold', () => {
  it('a resolve inside the hold makes the revert pending; it happens when due', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1', { minHoldMs: 120_000 }));
    const held = key.resolve(event('coffee', 'f1', { minHoldMs: 120_000 }), T0 + 30_000);
    assert.equal(held.action, 'hold');
    assert.equal(held.write, null);
    assert.equal(key.current?.value, '1');
    assert.deepEqual(key.state?.revert, {
      atMs: T0 + 120_000,
      onResolve: 'delete',
      rule: 'coffee',
      alertname: 'CoffeeOverloaded',
      fingerprint: 'f1',
    });
    assert.equal(key.apply(onDue(key.state!, key.current, T0 + 119_999)).action, 'none');
    assert.equal(key.current?.value, '1');
    assert.equal(key.apply(onDue(key.state!, key.current, T0 + 120_000)).action, 'delete');
    assert.equal(key.current, null);
    assert.equal(key.state, null);
  });

  it('an alert firing again cancels the pending revert', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1', { minHoldMs: 120_000 }));
    key.resolve(event('coffee', 'f1', { minHoldMs: 120_000 }), T0 + 30_000);
    key.fire(event('coffee', 'f1', { minHoldMs: 120_000 }), T0 + 60_000);
    assert.equal(key.state?.revert, null);
    assert.equal(onDue(key.state!, key.current, T0 + 200_000).action, 'none');
  });

  it('a resolve after the hold reverts at once', () => {
    const key = new Key();
    key.fire(event('coffee', 'f1', { minHoldMs: 120_000 }));
    assert.equal(key.resolve(event('coffee', 'f1', { minHoldMs: 120_000 }), T0 + 120_000).action, 'delete');
  });
});

describe('key state: properties', () => {
  const holders = ['a/1', 'a/2', 'b/1'] as const;
  const step = fc.record({
    holder: fc.constantFrom(...holders),
    firing: fc.boolean(),
    twice: fc.boolean(),
  });

  it('the key is set exactly while some holder fires, and reverts to what it was; duplicates change nothing', () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 40 }),
        fc.option(fc.constantFrom('0', '7'), { nil: null }),
        fc.constantFrom('delete' as const, 'restore' as const),
        (steps, initial, onResolve) => {
          const before: KeyvalEntry | null = initial === null ? null : { value: initial, expireAtMs: null };
          const key = new Key(before);
          const firing = new Set<string>();
          let everHeld = false;
          for (const [i, s] of steps.entries()) {
            const [rule, fingerprint] = s.holder.split('/') as [string, string];
            const e = event(rule, fingerprint, { onResolve });
            const nowMs = T0 + i * 1000;
            const run = () => (s.firing ? key.fire(e, nowMs) : key.resolve(e, nowMs));
            run();
            const once = { state: key.state, current: key.current };
            if (s.twice) {
              const plan = run();
              assert.ok(plan.action === 'refresh' || plan.action === 'none', plan.action);
              assert.deepEqual({ state: key.state, current: key.current }, once);
            }
            everHeld ||= s.firing;
            if (s.firing) firing.add(s.holder);
            else firing.delete(s.holder);
            if (firing.size > 0) {
              assert.equal(key.current?.value, '1');
              assert.deepEqual(Object.keys(key.state!.holders).sort(), [...firing].sort());
            } else {
              assert.equal(key.state, null);
              assert.deepEqual(key.current, onResolve === 'restore' || !everHeld ? before : null);
            }
          }
        },
      ),
    );
  });

  it('records survive the round trip through the store; junk is refused', () => {
    const key = new Key({ value: '0', expireAtMs: null });
    key.fire(event('coffee', 'f1'));
    assert.deepEqual(decodeKeyState(encodeKeyState(key.state!)), key.state);
    for (const junk of ['', 'null', '{}', '[]', '{"holders":{}}', 'not json'])
      assert.equal(decodeKeyState(junk), null);
  });
});
