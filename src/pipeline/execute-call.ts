import { status } from '@grpc/grpc-js';
import { ErrorKind, type ToolCall, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { prepareArguments, type ParsedText } from '../arguments';
import { DispatchError, HardError } from '../errors';
import { MAX_RECOVERY_ATTEMPTS } from '../options';
import type { ResolvedTool } from '../registry';
import type { CallObserver } from './observer';
import type { Failure, Reflection } from './guards';
import type { PipelineDeps, TurnContext } from './pipeline-deps';
import { errorResult } from './results';
import { quoted, unknownTool } from './unknown-tool';
import { applyCorrection } from './corrections';
import type { ReadKeys } from './attempt-context';
import { runAttempt, type CallProgress } from './run-attempt';
import { retryRefusal } from './retry-room';
import { delay } from './signals';
import { checkMayStart } from './turn-error';
import { refusedCallOp } from './loop-op';
import { countsAsRefusal, DEFAULT_REFUSAL_THRESHOLDS, recordRefusal, type RefusedCall } from './refused-loops';

/**
 * A call's arguments as a parallel turn's planner read them for `tool`: JSON.parse of the text
 * (for a tool whose schema has no default and which is not lenient, so preparing them changes
 * nothing), their canonical JSON and the call's loop operation on `tool`. The call's first
 * attempt takes them instead of reading the text again, when it runs on that tool with the
 * arguments its hooks left as they were.
 */
export interface ReadArguments extends ParsedText, ReadKeys {
  readonly tool: ResolvedTool;
}

/**
 * What the reflector decides of a failure. One that throws (a plugin's bug, a `fixArguments` of
 * the recovery reflector's) is taken as "not retried", logged: the call ends with its error, soft,
 * where before the throw ended the whole turn INTERNAL, the results of its other calls lost.
 */
async function reflectOn(deps: PipelineDeps, failure: Failure): Promise<Reflection> {
  try {
    return await deps.guards.reflector.reflect(failure);
  } catch (error) {
    deps.logger.warn('the reflector failed; the call ends with its error, not retried', { tool: failure.tool.name, error: error instanceof Error ? error.message : String(error) });
    return { retry: false, reason: 'the reflector failed' };
  }
}

/**
 * The whole lifecycle of one call (DESIGN section 3): lookup, argument parsing, repair and
 * validation once; then attempts until success, a decision not to retry (the original error is
 * returned, soft), or more than five attempts (ABORTED RECOVERY_EXHAUSTED). A correction is
 * applied before the retry is announced, and one that is refused ends the call with its error
 * (see applyCorrection). A fallback retries under its own policy, its attempts counted from 1;
 * a call that fell back ends soft at the ceiling. Once dispatchd drains, no attempt starts and a
 * backoff ends at once: the call throws SHUTTING_DOWN. The tool_call_id is stamped on the result
 * last, whatever a middleware did.
 */
export async function executeCall(deps: PipelineDeps, turn: TurnContext, call: ToolCall, obs: CallObserver, read?: ReadArguments): Promise<ToolResult> {
  const started = performance.now();
  let tool: ResolvedTool | undefined = turn.offeredTools && !turn.offeredTools.has(call.name) ? undefined : deps.registry.lookup(turn.tenant, call.name);
  // The error's `tool` quoted short: a made-up name may be megabytes, and max_result_chars bounds only a tool's output.
  if (!tool) {
    const refusal = unknownTool(deps, turn, call.name);
    const said: string[] = [];
    await refusedOnce(deps, turn, obs, call, { op: refusedCallOp(call.name, '', call.arguments, deps.limits), name: `"${quoted(call.name)}"`, loop: DEFAULT_REFUSAL_THRESHOLDS, attempt: 0 }, refusal, said);
    return errorResult(call.id, quoted(call.name), refusal, 0, since(started), said);
  }
  let args: unknown;
  let warnings: string[];
  // Read for another tool (the registry changed since), the planner's reading is not this call's.
  const known = read?.tool === tool ? read : undefined;
  try {
    const prepared = prepareArguments(tool, call.arguments, deps.limits, known, turn.tenant);
    args = prepared.args;
    warnings = prepared.warnings.length === 0 ? [] : [...prepared.warnings];
  } catch (error) {
    const refusal = DispatchError.from(error, 'before');
    const said: string[] = [];
    if (refusal.kind === ErrorKind.INVALID_ARGUMENTS) await refusedOnce(deps, turn, obs, call, { op: refusedCallOp(tool.name, tool.spec.primaryParameter, call.arguments, deps.limits), name: tool.name, loop: tool.loop, attempt: 0 }, refusal, said);
    return errorResult(call.id, call.name, refusal, 0, since(started), said, tool.maxResultChars);
  }
  // Its shape fixed from the start (a field added later would change it on the hot path).
  const progress: CallProgress = { budgetsCounted: undefined, lastFailure: undefined, ranAndFailed: undefined, countedBeforeAsking: undefined, failureWarnings: undefined, calledTool: tool };
  // The tools this call has run on: a fallback never leads back to one of them. Made at the first
  // correction (a Set per call measured ~2% of a parallel turn's allocations).
  let tried: Set<string> | undefined;
  // Attempts of the current tool: a fallback's own retry policy counts its attempts, not the call's.
  let toolAttempt = 1;
  // The result the call had when it last fell back, kept if its fallback is refused before it runs.
  let beforeFallback: ToolResult | undefined;
  for (let attempt = 1; ; attempt++, toolAttempt++) {
    checkMayStart(turn);
    // Only the first attempt's arguments are the planner's: an executor or middleware may change them in place.
    let outcome: Awaited<ReturnType<typeof runAttempt>>;
    try {
      outcome = await runAttempt(deps, turn, obs, call.id, tool, args, attempt, warnings, progress, attempt === 1 ? known : undefined);
    } catch (thrown) {
      // The loop check names no call: its ErrorInfo says which one stopped the turn.
      if (thrown instanceof HardError && thrown.reason === 'LOOP_DETECTED') thrown.facts = { tool: tool.name, tool_call_id: call.id, attempts: attempt };
      throw thrown;
    }
    const { result, error } = outcome;
    if (!error) return stamp(result, call.id, attempt, since(started));
    // A fallback a policy rule or hook refused (BLOCKED: countsAsRefusal) ran nothing: the call ends
    // with the error of the tool it called, which says what to do (a recoverable UNAVAILABLE, say),
    // not with a refusal of a tool the model never called telling it not to retry. (A fallback past
    // its own session budget is refused BLOCKED, as a direct call: docs/policies.md, Budgets.)
    if (beforeFallback && toolAttempt === 1 && countsAsRefusal(error)) {
      beforeFallback.warnings.push(`no fallback ran: its fallback_tool "${tool.name}" was refused: ${error.message}`);
      return stamp(beforeFallback, call.id, attempt, since(started));
    }
    // A side-effecting tool that failed while it ran may have taken effect (DESIGN section 4): it
    // is not run again, whatever a reflector proposes. Fixed arguments or a fallback tool make
    // another idempotency key, which no record stops: the same email went out twice.
    if (!tool.readOnly && error.phase === 'during') return stamp(result, call.id, attempt, since(started));
    const reflection = await reflectOn(deps, { tool, args, error, attempt: toolAttempt, attemptsSoFar: attempt });
    if (!reflection.retry) {
      if (reflection.warning !== undefined) result.warnings.push(reflection.warning);
      return stamp(result, call.id, attempt, since(started));
    }
    if (reflection.correction) {
      tried ??= new Set([tool.name]);
      const next = applyCorrection(deps, turn, { tool, args }, reflection.correction, attempt, tried, warnings);
      if ('refused' in next) {
        if (next.warning !== undefined) result.warnings.push(next.warning);
        return stamp(result, call.id, attempt, since(started));
      }
      if (next.tool !== tool) {
        beforeFallback = result;
        tool = next.tool;
        tried.add(tool.name);
        toolAttempt = 0;
      }
      args = next.args;
    }
    if (attempt + 1 > MAX_RECOVERY_ATTEMPTS) {
      // A call that fell back ran out of attempts on its fallbacks' own retries, not on a reflector
      // that never gives up: it ends with its last error, soft, as a call not retried does.
      if (tried !== undefined && tried.size > 1) return stamp(result, call.id, attempt, since(started));
      throw new HardError(status.ABORTED, 'RECOVERY_EXHAUSTED', `call ${call.id} to "${call.name}" failed ${attempt} times; recovery gave up after ${MAX_RECOVERY_ATTEMPTS} attempts`, {
        tool: call.name,
        tool_call_id: call.id,
        attempts: attempt,
      });
    }
    // A wait that would end past the request's deadline (a Retry-After of a minute, say), or leave
    // too little of it for the retry to run (see retryRefusal), would cost the whole turn
    // DEADLINE_EXCEEDED, results of calls that ran included: the call ends with its error, soft,
    // which carries retry_after_ms when the tool gave one.
    const tooLate = retryRefusal(tool, turn, reflection.delayMs, outcome.ranMs);
    if (tooLate !== undefined) {
      result.warnings.push(tooLate);
      return stamp(result, call.id, attempt, since(started));
    }
    obs.retry(attempt, reflection.delayMs, reflection.reason);
    try {
      await delay(reflection.delayMs, turn.signal, turn.draining);
    } catch {
      throw turn.signal.aborted ? HardError.cancelled() : HardError.shuttingDown();
    }
  }
}

/**
 * Records a call refused once per call (UNKNOWN_TOOL, INVALID_ARGUMENTS) in the loop window
 * (recordRefusal); its LOOP_DETECTED names the call, as an attempt's does.
 */
async function refusedOnce(deps: PipelineDeps, turn: TurnContext, obs: CallObserver, call: ToolCall, refused: RefusedCall, refusal: DispatchError, warnings: string[]): Promise<void> {
  try {
    await recordRefusal(deps, turn, obs, refused, refusal, warnings);
  } catch (thrown) {
    if (thrown instanceof HardError) thrown.facts = { tool: quoted(call.name), tool_call_id: call.id, attempts: 0 };
    throw thrown;
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
