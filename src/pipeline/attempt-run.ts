import { createHash } from 'node:crypto';
import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, type ErrorJson } from '../errors';
import type { ResolvedTool } from '../registry';
import { newResultHandle, type FinishAttempt, type StoredResult } from '../store';
import type { AttemptContext, CallKey } from './attempt-context';
import { logToolFailure, thrownFailure } from './attempt-end';
import { boundResult } from './bound-result';
import { boundErrorOutput } from './bound-error';
import { toldWaitMs, withWait } from './loop-block';
import { outputWasCut, type ToolOutput } from './middleware';
import type { PipelineDeps } from './pipeline-deps';
import { errorResult, toolResult, toStored } from './results';
import { answeredSuggestion, keptFailureSuggestion, sideEffectFailure } from './side-effect-failure';
import type { GuardedOutcome } from './signals';

// What an attempt's run of its tool came to, as run-attempt and a run that outlived its turn
// (outlived-attempt) both read it: its error, its result, its idempotency record.

/**
 * The failure of a guarded run, classified (undefined when it was done): cancelled, or out of time
 * because the caller's deadline came first (`timeoutMs` under the tool's own), is CANCELLED, the
 * caller's doing (the RPC ends DEADLINE_EXCEEDED), no timeout of the tool's for its breaker and
 * stats; out of time with nothing sent (a connect that hung) is UNAVAILABLE, not run; else TIMEOUT
 * or what the tool threw. A side-effecting tool's is told as what it may have done (sideEffectFailure).
 */
export function runFailure(deps: PipelineDeps, tool: ResolvedTool, callId: string, attempt: number, run: GuardedOutcome<ToolOutput>, context: AttemptContext | undefined, timeoutMs: number, claimed: boolean): DispatchError | undefined {
  if (run.kind === 'done') return undefined;
  // Timed out or cancelled while the executor had sent nothing (a connect that hung): not run.
  const phase = context?.delivered === 'pending' ? 'before' : 'during';
  let error: DispatchError;
  if (run.kind === 'cancelled' || (run.kind === 'timeout' && timeoutMs < tool.timeoutMs)) error = new DispatchError(ErrorKind.CANCELLED, 'the call was cancelled', { phase });
  else if (run.kind === 'timeout' && phase === 'before') error = new DispatchError(ErrorKind.UNAVAILABLE, `could not reach the tool within ${timeoutMs} ms; nothing was sent to it`, { phase, recoverable: true });
  else if (run.kind === 'timeout' && context?.lateAnswered) error = new DispatchError(ErrorKind.TIMEOUT, `the tool answered, but its answer was still being redacted when its ${timeoutMs} ms ran out`, { phase, recoverable: false, suggestion: answeredSuggestion(tool) });
  else if (run.kind === 'timeout') error = new DispatchError(ErrorKind.TIMEOUT, `the tool did not answer within ${timeoutMs} ms`, { phase, recoverable: tool.readOnly });
  else error = thrownFailure(deps, tool.name, callId, attempt, run.error);
  logToolFailure(deps.logger, tool.name, callId, attempt, error, context);
  return !tool.readOnly && error.kind !== ErrorKind.CANCELLED ? sideEffectFailure(error, tool, claimed) : error;
}

/** An attempt's result from its run (or `error`), and the spill of a bounded result's whole text. */
export function runResult(deps: PipelineDeps, sessionId: string, tool: ResolvedTool, callId: string, attempt: number, run: GuardedOutcome<ToolOutput>, error: DispatchError | undefined, durationMs: number, warnings: readonly string[]): { result: ToolResult; spill?: FinishAttempt['spill'] } {
  // A run that was not done has its error (runFailure).
  if (error || run.kind !== 'done') return { result: errorResult(callId, tool.name, withWait(error!, toldWaitMs(error, tool.loop.assumedWaitMs)), attempt, durationMs, warnings, tool.maxResultChars) };
  const { text } = run.value;
  const bounded = boundResult(text, tool.maxResultChars);
  const handle = bounded.truncated ? newResultHandle(sessionId) : '';
  const spill = bounded.truncated ? { handle, text, ttlSeconds: tool.idempotencyTtlSeconds } : undefined;
  const truncated = bounded.truncated || outputWasCut(run.value, deps.limits.maxToolOutputChars);
  return { result: toolResult({ toolCallId: callId, output: bounded.text, attempts: attempt, durationMs, resolvedToolName: tool.name, truncated, resultHandle: handle, cached: run.value.cached ?? false, warnings: [...warnings] }), spill };
}

/**
 * What a claimed attempt leaves of its idempotency record: its result when the tool answered (or
 * failed after it ran), UNKNOWN when it failed while it ran, the claim given back when it never
 * ran. Written over this attempt's claim only (`owner`).
 */
export function claimEnd(key: CallKey, tool: ResolvedTool, owner: string, result: ToolResult, error: DispatchError | undefined, loopResult: string | undefined): NonNullable<FinishAttempt['idempotency']> {
  if (!error || error.phase === 'after') {
    const stored = toStored(result, result.truncated ? loopResult : undefined);
    // Keyed by some arguments: the rest may differ in a call that replays this one (replayNote).
    const digest = tool.keyFields.length > 0 ? { argumentsDigest: argumentsDigest(key.canonicalArgs) } : {};
    return { key: key.value, action: 'complete', result: { ...stored, ...digest }, ttlSeconds: tool.idempotencyTtlSeconds, owner };
  }
  if (error.phase === 'during') return { key: key.value, action: 'unknown', ttlSeconds: tool.idempotencyTtlSeconds, owner };
  return { key: key.value, action: 'release', owner };
}

/** The digest a record keeps of a call's canonical arguments: 16 base64url characters of their SHA-256. */
export const argumentsDigest = (canonicalArgs: string): string => createHash('sha256').update(canonicalArgs).digest('base64url').slice(0, 16);

/**
 * The warning on a replay of a record whose call had other arguments than this one's (beyond the
 * tool's `key_fields`, which are the same): the model's new values were not sent. Before, the
 * replay read as the new call's own success (a probe's email body changed, the first one replayed).
 */
export function replayNote(tool: ResolvedTool, stored: StoredResult, canonicalArgs: string): string | undefined {
  if (stored.argumentsDigest === undefined || stored.argumentsDigest === argumentsDigest(canonicalArgs)) return undefined;
  return `this is the result of an earlier call with the same ${tool.keyFields.join(', ')}, replayed: the tool did not run again, and this call's other arguments, which differ from that call's, were not sent; to send them, change ${tool.keyFields.join(' or ')}`;
}

/**
 * A recorded error as its replay tells it: with the suggestion of a kept failure (the same call
 * returns it again until the record expires; what reaches the tool), not the first answer's own
 * ("call again later" of a tool error, which only replays it). Not an answer that ran and could
 * not be read (UNEXPECTED after: "do not call it again" stays).
 */
export function replayedError(tool: ResolvedTool, stored: StoredResult): StoredResult {
  if (!stored.isError || stored.errorKind === ErrorKind.UNEXPECTED) return stored;
  const suggestion = keptFailureSuggestion(tool);
  // The model reads the error JSON in `output`: its suggestion is the one told too, within max_result_chars.
  let output = stored.output;
  try {
    const json = JSON.parse(output) as ErrorJson;
    if (json?.error === true) output = boundErrorOutput({ ...json, suggestion }, tool.maxResultChars);
  } catch {
    // Not the error JSON (a record of another version): its output as it was.
  }
  return { ...stored, output, suggestion };
}
