/**
 * The control plane over read ports only (a replica's `--status-listen`): every write answers 405
 * MethodDisabled, as NGINX's `api write=off` does. Access control refuses writes before they get here;
 * this keeps the refusal in one place should a route reach the store anyway.
 */
import { LimitswitchError } from '../shared/errors.ts';
import type { AuditTrail } from '../store/audit-trail.ts';
import type { RegistryReader } from '../store/cluster-registry.ts';
import type { CounterStore } from '../store/counter-store.ts';
import type { KeyvalReader } from '../store/keyval-store.ts';
import type { ControlPlaneStore } from './store-gateway.ts';

export interface ReadPorts {
  readonly keyvals: KeyvalReader;
  readonly registry: RegistryReader;
  readonly counters: Pick<CounterStore, 'read'>;
  readonly audit: Pick<AuditTrail, 'recent'>;
}

const disabled = (): Promise<never> => Promise.reject(new LimitswitchError('MethodDisabled'));

export function readOnlyStore(ports: ReadPorts): ControlPlaneStore {
  return {
    keyvals: {
      ...bind(ports.keyvals, ['getZone', 'snapshot', 'head', 'commitAt']),
      add: disabled,
      change: disabled,
      set: disabled,
      delete: disabled,
      empty: disabled,
      // Nothing expires here that the store does not expire itself.
      expireDue: async () => null,
      restore: disabled,
    },
    registry: {
      ...bind(ports.registry, ['zones', 'replicas']),
      registerZones: disabled,
      heartbeat: disabled,
      deregister: disabled,
    },
    counters: { ...bind(ports.counters, ['read']), add: disabled, reset: disabled, resets: disabled },
    audit: { ...bind(ports.audit, ['recent']), append: disabled },
    leases: { acquire: disabled, release: disabled, records: disabled, putRecord: disabled },
  };
}

function bind<T extends object, K extends keyof T>(target: T, names: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const name of names) out[name] = (target[name] as (...a: unknown[]) => unknown).bind(target) as T[K];
  return out;
}
