/**
 * ngx_http_rewrite_handler: a level's codes run in order until one ends the script (`break`, `return`,
 * a `rewrite` with a flag or a redirect) or they run out. A `return` or a redirect answers.
 */

import { parseSize } from '../scalar-values.ts';
import type { RequestContext } from '../variables/request-context.ts';
import { runRewrite } from './rewrite-regex.ts';
import type { RewriteCode, ScriptAnswer, ScriptState } from './rewrite-script.ts';

/** Runs `codes`; null when the script ended without an answer (the phases go on). */
export function runScript<H>(
  codes: readonly RewriteCode<H>[],
  ctx: RequestContext,
  state: ScriptState<H>,
  log: boolean,
): ScriptAnswer | null {
  const end = run(codes, ctx, state, log);
  return end === 'next' || end === 'exit' ? null : end;
}

function run<H>(
  codes: readonly RewriteCode<H>[],
  ctx: RequestContext,
  state: ScriptState<H>,
  log: boolean,
): 'next' | 'exit' | ScriptAnswer {
  for (const code of codes) {
    switch (code.op) {
      case 'rewrite': {
        const end = runRewrite(code, ctx, state, log);
        if (end !== 'next') return end;
        break;
      }
      case 'set':
        ctx.cache[code.slot] = code.value(ctx);
        break;
      case 'set_limit_rate': {
        const value = code.value(ctx);
        const rate = parseSize(value);
        if (rate !== null) ctx.limitRate = rate;
        else state.logs.push({ level: 'error', message: `invalid $limit_rate "${value}"` });
        break;
      }
      case 'break':
        // ngx_http_script_break_code
        if (state.uriChanged) {
          state.validLocation = false;
          state.uriChanged = false;
        }
        return 'exit';
      case 'return': {
        const text = code.answer.text === null ? null : code.answer.text(ctx);
        return { code: code.answer.code, text };
      }
      case 'if': {
        if (!code.holds(ctx)) break;
        if (code.handler !== null) state.handler = code.handler;
        const end = run(code.codes, ctx, state, log);
        if (end !== 'next') return end;
        break;
      }
    }
  }
  return 'next';
}
