/**
 * A level's `expires`, `limit_rate` and `limit_rate_after` (AnswerSpec) as the location handler holds
 * them: a value without variables read once here, one with variables per request.
 */
import type { ComplexValue } from '../engine/complex-value.ts';
import { type CompiledAnswerRate, NO_ANSWER_RATE, type SizeValue } from '../engine/http/answer-rate.ts';
import type { CompiledExpires } from '../engine/http/expires.ts';
import type { LocationHandler } from '../engine/http/location-handler.ts';
import { parseSize } from '../engine/scalar-values.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import type { AnswerSpec } from './model.ts';

export function compileExpires(
  answer: Pick<AnswerSpec, 'expires'>,
  variables: VariableTable,
): CompiledExpires | null {
  const { expires } = answer;
  if (expires.kind === 'off' && expires.value === null) return null;
  const value = expires.value === null ? null : variables.compile(expires.value);
  return { kind: expires.kind, timeS: expires.timeS, value };
}

export function compileAnswerRate(answer: AnswerSpec, variables: VariableTable): CompiledAnswerRate {
  if (answer.limitRate === null && answer.limitRateAfter === null) return NO_ANSWER_RATE;
  return {
    limitRate: sizeValue(answer.limitRate, variables),
    limitRateAfter: sizeValue(answer.limitRateAfter, variables),
  };
}

/** An `if` block's own settings over its location's, each on its own (the block's merge). */
export function compileIfAnswer(
  own: Partial<AnswerSpec>,
  level: Pick<LocationHandler, 'expires' | 'answerRate'>,
  variables: VariableTable,
): Pick<LocationHandler, 'expires' | 'answerRate'> {
  const rate = level.answerRate;
  return {
    expires: own.expires === undefined ? level.expires : compileExpires({ expires: own.expires }, variables),
    answerRate: {
      limitRate: own.limitRate === undefined ? rate.limitRate : sizeValue(own.limitRate, variables),
      limitRateAfter:
        own.limitRateAfter === undefined ? rate.limitRateAfter : sizeValue(own.limitRateAfter, variables),
    },
  };
}

/** A constant's size was checked at its directive's line (directives/answer-filters.ts). */
function sizeValue(value: ComplexValue | null, variables: VariableTable): SizeValue | null {
  if (value === null) return null;
  const only = value.parts.length === 1 ? value.parts[0]! : null;
  if (only !== null && 'text' in only) return parseSize(only.text) ?? 0;
  if (value.parts.length === 0) return 0;
  return variables.compile(value);
}
