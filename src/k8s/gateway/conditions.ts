/**
 * Status conditions as the Gateway API and NGF write them (`type`, `status`, `reason`, `message`,
 * `observedGeneration`). `lastTransitionTime` is set when status is written, kept while nothing changes.
 */
import type { KubeObject } from '../objects.ts';
import type { Condition } from './gateway-objects.ts';

export function condition(
  obj: KubeObject,
  type: string,
  ok: boolean,
  reason: string,
  message: string,
): Condition {
  const generation = obj.metadata?.generation;
  return {
    type,
    status: ok ? 'True' : 'False',
    reason,
    message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** NGF's condition on the objects a RateLimitPolicy affects. */
export const RATE_LIMIT_POLICY_AFFECTED = 'gateway.nginx.org/RateLimitPolicyAffected';
