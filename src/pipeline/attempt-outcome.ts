import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName, type DispatchError } from '../errors';
import type { ResolvedTool } from '../registry';
import type { AttemptObserver } from './observer';
import { refusedBy } from './refused-loops';
import { errorResult } from './results';
import type { AttemptResult } from './run-attempt';

/**
 * Ends an attempt: its TOOL_POST, and what it gives the call (`ranMs`: how long its tool ran, if it
 * did; `answered`: the HTTP status its tool answered, if any).
 */
export function finished(attemptObs: AttemptObserver, result: ToolResult, error?: DispatchError, ranMs?: number, answered?: number): AttemptResult {
  // A replayed failure has no error of its own: its stored kind is the outcome.
  const kind = error?.kind ?? (result.isError ? result.error?.kind : undefined);
  attemptObs.post({
    isError: result.isError,
    errorKind: kind === undefined ? undefined : kindName(kind),
    errorPhase: error?.phase,
    httpStatus: error?.httpStatus,
    answeredStatus: answered ?? error?.httpStatus,
    policy: error && refusedBy(error),
    errorMessage: result.isError ? result.error?.message : undefined,
    resolvedTool: result.resolvedToolName,
    durationMs: result.durationMs,
    ranMs,
    replay: result.idempotentReplay,
    cached: result.cached,
    truncated: result.truncated,
    outputChars: result.output.length,
  });
  return { result, error, ranMs };
}

/**
 * Ends an attempt that failed before its tool ran (or instead of it) with `error`; its result
 * tells the model `shown` (see failedThenRefused).
 */
export function failedBefore(attemptObs: AttemptObserver, callId: string, tool: ResolvedTool, error: DispatchError, attempt: number, started: number, warnings: string[], shown = error): AttemptResult {
  return finished(attemptObs, errorResult(callId, tool.name, shown, attempt, Math.round(performance.now() - started), warnings, tool.maxResultChars), error);
}
