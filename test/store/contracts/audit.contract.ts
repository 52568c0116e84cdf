/** The audit port contract: appended entries, newest first, limited. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditEntry } from '../../../src/store/audit-trail.ts';
import type { StoreHarness } from './store-harness.ts';

export function auditContract(name: string, harness: StoreHarness): void {
  describe(`audit port contract: ${name}`, () => {
    it('newest first, limited', async () => {
      const { audit } = await harness.create();
      const entry = (i: number): AuditEntry => ({
        timeMs: i,
        tokenId: i === 2 ? null : `t${i}`,
        client: '127.0.0.1',
        zone: 'z',
        key: i === 3 ? null : 'k',
        old: null,
        new: String(i),
        revision: i,
        reason: i === 1 ? 'incident 42' : null,
      });
      for (let i = 1; i <= 3; i++) await audit.append(entry(i));
      const entries = await audit.recent(2);
      assert.deepEqual(entries, [entry(3), entry(2)]);
      assert.equal((await audit.recent(10)).length, 3);
      assert.deepEqual(await audit.recent(0), []);
    });
  });
}
