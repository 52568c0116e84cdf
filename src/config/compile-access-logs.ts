/** A level's `access_log` lines compiled into the engine's (engine/http/access-log.ts). */
import { type CompiledAccessLog, compileLogParts } from '../engine/http/access-log.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import { hasCode } from '../shared/errors.ts';
import { configError } from './config-error.ts';
import type { AccessLogSpec } from './model.ts';

/** An unknown variable in the format is nginx's `unknown "x" variable`, at the `log_format` line. */
export function compileAccessLogs(
  specs: readonly AccessLogSpec[],
  variables: VariableTable,
): CompiledAccessLog[] {
  return specs.map((spec) => {
    try {
      return {
        path: spec.path,
        parts: compileLogParts(spec.format.parts, variables),
        escape: spec.format.escape,
        condition: spec.condition === null ? null : variables.compile(spec.condition),
      };
    } catch (err) {
      if (!hasCode(err, 'RL_ERR_UNKNOWN_VARIABLE')) throw err;
      const at = spec.format.source.line === 0 ? spec.source : spec.format.source;
      throw configError(err.message, { file: at.file, line: at.line });
    }
  });
}
