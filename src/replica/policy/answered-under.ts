/**
 * A shared answer (a 403, a 404, a refusal) given under a verdict's `add_header` lines: a copy that
 * carries them when there are any, else the shared object itself.
 */
import type { Verdict } from '../../engine/http/verdict.ts';
import type { Decision } from '../http/contract/decision.ts';

export function answeredUnder<D extends Decision>(decision: D, verdict: Verdict): D {
  const answerHeaders = verdict.answerHeaders;
  return answerHeaders === null ? decision : { ...decision, answerHeaders };
}
