/** Every port contract, for one backend. */
import { after } from 'node:test';
import { auditContract } from './audit.contract.ts';
import { countersContract } from './counters.contract.ts';
import { keyvalContract } from './keyval.contract.ts';
import { leaseContract } from './lease.contract.ts';
import { limitSyncContract } from './limit-sync.contract.ts';
import { registryContract } from './registry.contract.ts';
import type { StoreHarness } from './store-harness.ts';

export function storeContracts(name: string, harness: StoreHarness): void {
  after(async () => harness.close?.());
  keyvalContract(name, harness);
  registryContract(name, harness);
  countersContract(name, harness);
  auditContract(name, harness);
  leaseContract(name, harness);
  limitSyncContract(name, harness);
}
