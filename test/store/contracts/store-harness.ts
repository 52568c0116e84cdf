/**
 * What every port contract runs on: `create()` gives a fresh, empty store of one backend;
 * `peer(store)` another client of the same data (a second control plane or replica).
 */
import assert from 'node:assert/strict';
import type { Clock } from '../../../src/shared/clock.ts';
import type { Store } from '../../../src/store/store.ts';

export interface StoreHarness {
  create(options?: { maxLogEntries?: number; clock?: Clock }): Promise<Store>;
  peer(store: Store): Promise<Store>;
  /** Called once after the suites. */
  close?(): Promise<void>;
}

/** Assert a promise rejects with exactly this code, status and text. */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  status: number,
  message: string,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.deepEqual(
      {
        code: (err as { code?: unknown }).code,
        status: (err as { status?: unknown }).status,
        message: (err as Error).message,
      },
      { code, status, message },
    );
    return true;
  });
}
