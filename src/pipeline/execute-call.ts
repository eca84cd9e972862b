import { status } from '@grpc/grpc-js';
import type { ToolCall, ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { prepareArguments } from '../arguments';
import { DispatchError, errors, HardError } from '../errors';
import { closestMatch } from '../json';
import { MAX_RECOVERY_ATTEMPTS } from '../options';
import type { ResolvedTool } from '../registry';
import type { CallObserver } from './observer';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { errorResult } from './results';
import { runAttempt } from './run-attempt';
import { delay } from './signals';

function unknownTool(deps: PipelineDeps, turn: TurnContext, name: string): DispatchError {
  if (turn.offeredTools && !turn.offeredTools.has(name)) {
    return errors.unknownTool(`tool "${name}" is not available; it was not offered to you`, `Call one of the offered tools: ${[...turn.offeredTools].slice(0, 20).join(', ')}.`);
  }
  const names = deps.registry.list(turn.tenant).map((t) => t.name);
  const guess = closestMatch(name, names);
  const available = names.slice(0, 20).join(', ');
  return errors.unknownTool(
    `tool "${name}" not found${guess ? `; did you mean "${guess}"?` : ''}`,
    guess ? `Call "${guess}" instead, if it is what you meant. Available tools: ${available}.` : `Available tools: ${available}.`,
  );
}

/**
 * The whole lifecycle of one call (DESIGN section 3): lookup, argument parsing, repair and
 * validation once; then attempts until success, a decision not to retry (the original error is
 * returned, soft), or more than five attempts (ABORTED RECOVERY_EXHAUSTED). The tool_call_id is
 * stamped on the result last, whatever a middleware did.
 */
export async function executeCall(deps: PipelineDeps, turn: TurnContext, call: ToolCall, obs: CallObserver): Promise<ToolResult> {
  const started = performance.now();
  let tool: ResolvedTool | undefined = turn.offeredTools && !turn.offeredTools.has(call.name) ? undefined : deps.registry.lookup(turn.tenant, call.name);
  if (!tool) return errorResult(call.id, call.name, unknownTool(deps, turn, call.name), 0, since(started));
  let args: unknown;
  let warnings: string[];
  try {
    const prepared = prepareArguments(tool, call.arguments, deps.limits);
    args = prepared.args;
    warnings = prepared.warnings.length === 0 ? [] : [...prepared.warnings];
  } catch (error) {
    return errorResult(call.id, call.name, DispatchError.from(error, 'before'), 0, since(started));
  }
  const progress = deps.guards.budgets ? { budgetCounted: false } : undefined;
  for (let attempt = 1; ; attempt++) {
    if (turn.signal.aborted) throw HardError.cancelled();
    const { result, error } = await runAttempt(deps, turn, obs, call.id, tool, args, attempt, warnings, progress);
    if (!error) return stamp(result, call.id, attempt, since(started));
    const reflection = await deps.guards.reflector.reflect({ tool, args, error, attempt, attemptsSoFar: attempt });
    if (!reflection.retry) return stamp(result, call.id, attempt, since(started));
    if (attempt + 1 > MAX_RECOVERY_ATTEMPTS) {
      throw new HardError(status.ABORTED, 'RECOVERY_EXHAUSTED', `call ${call.id} to "${call.name}" failed ${attempt} times; recovery gave up after ${MAX_RECOVERY_ATTEMPTS} attempts`);
    }
    obs.retry(attempt, reflection.delayMs, reflection.reason);
    try {
      await delay(reflection.delayMs, turn.signal);
    } catch {
      throw HardError.cancelled();
    }
    const correction = reflection.correction;
    if (correction?.tool !== undefined) {
      const fallback = deps.registry.lookup(turn.tenant, correction.tool);
      if (!fallback || (correction.arguments === undefined && !fallback.validate(args))) return stamp(result, call.id, attempt, since(started));
      tool = fallback;
      warnings.push(`fell back from "${call.name}" to "${fallback.name}"${correction.note ? `: ${correction.note}` : ''}`);
    }
    if (correction?.arguments !== undefined) {
      if (!tool.validate(correction.arguments)) return stamp(result, call.id, attempt, since(started));
      args = correction.arguments;
      warnings.push(`arguments corrected after attempt ${attempt}${correction.note ? `: ${correction.note}` : ''}`);
    }
  }
}

/** Whole milliseconds since `started` (performance.now). */
const since = (started: number): number => Math.round(performance.now() - started);

function stamp(result: ToolResult, callId: string, attempts: number, durationMs: number): ToolResult {
  result.toolCallId = callId;
  result.attempts = attempts;
  result.durationMs = durationMs;
  return result;
}
