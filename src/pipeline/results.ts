import { create } from '@bufbuild/protobuf';
import { ToolErrorSchema, ToolResultSchema, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { toErrorJson, suggestionFor, type DispatchError } from '../errors';
import { fullTextNotKeptWarning, type StoredResult } from '../store';
import { codePointLength } from './bound-result';
import { boundErrorOutput } from './bound-error';
import { isBudgetWarning } from './refusals';

type ToolResultInit = Partial<Omit<ToolResult, '$typeName'>>;

/** Every field at its default; copied, not shared: `warnings` is always a fresh array. */
const EMPTY_RESULT: ToolResult = create(ToolResultSchema);

/**
 * A ToolResult from `init`, the same message as `create(ToolResultSchema, init)` (a test checks
 * the bytes) at a fraction of the cost: create() walks the schema for every message, and the hot
 * path makes one per call.
 */
export function toolResult(init: ToolResultInit): ToolResult {
  return { ...EMPTY_RESULT, warnings: [], ...init };
}

/**
 * Takes the handle off a bounded result whose full text the store did not keep (it had no room for
 * it, failed, or was unreachable), since ReadResult would not find it, and tells the model so.
 */
export function fullTextNotKept(result: ToolResult, text: string): void {
  result.resultHandle = '';
  result.warnings.push(fullTextNotKeptWarning(codePointLength(text)));
}

/**
 * A failed call's result: the error JSON as output, cut to `maxChars` (its tool's
 * max_result_chars) where bound-error.ts can, the error fields set (whole: the model reads the
 * output). A side-effecting call's record keeps this output, so a replay returns it as it was.
 */
export function errorResult(callId: string, tool: string, error: DispatchError, attempts: number, durationMs: number, warnings: readonly string[] = [], maxChars = Infinity): ToolResult {
  const json = toErrorJson(tool, error, attempts);
  return create(ToolResultSchema, {
    toolCallId: callId,
    output: boundErrorOutput(json, maxChars),
    isError: true,
    error: create(ToolErrorSchema, {
      kind: error.kind,
      message: error.message,
      recoverable: error.recoverable,
      suggestion: json.suggestion,
      retryAfterMs: error.retryAfterMs ?? 0,
    }),
    attempts,
    durationMs,
    resolvedToolName: tool,
    warnings: [...warnings],
  });
}

/**
 * A result replayed from an idempotency record, stamped with the requesting call's id. Its
 * warnings are the record's, then `own`: those this call earned before the replay (its arguments
 * repaired, a budget nearly spent, a fallback taken), which the model reads of this call and the
 * record cannot hold; one the record holds already (the same repair of the same call) is not
 * said twice. The record's count of a session budget is left out: calls since may have spent more
 * of it, and the replay ran nothing ("1 call left" was told when the last call had been made).
 */
export function replayedResult(callId: string, stored: StoredResult, attempts: number, durationMs: number, own: readonly string[] = []): ToolResult {
  // Records of older versions have none.
  const warnings = stored.warnings ? stored.warnings.filter((warning) => !isBudgetWarning(warning)) : [];
  for (const warning of own) if (!warnings.includes(warning)) warnings.push(warning);
  return create(ToolResultSchema, {
    toolCallId: callId,
    output: stored.output,
    isError: stored.isError,
    error: stored.isError
      ? create(ToolErrorSchema, {
          kind: stored.errorKind ?? 0,
          message: stored.errorMessage ?? '',
          recoverable: stored.recoverable ?? false,
          suggestion: stored.suggestion ?? suggestionFor(stored.errorKind ?? 0),
        })
      : undefined,
    attempts,
    durationMs,
    resolvedToolName: stored.resolvedToolName,
    truncated: stored.truncated,
    resultHandle: stored.resultHandle,
    idempotentReplay: true,
    warnings,
  });
}

/**
 * The record kept for replay of a finished result. Its warnings are copied (a later one, such as
 * a full text not kept, is added to the record by the store that did not keep it), and left out
 * when there are none, so that most records stay as small as before.
 */
export function toStored(result: ToolResult, loopRecord?: string): StoredResult {
  const stored: StoredResult = {
    output: result.output,
    isError: result.isError,
    errorKind: result.error?.kind,
    errorMessage: result.error?.message,
    recoverable: result.error?.recoverable,
    suggestion: result.error?.suggestion,
    resolvedToolName: result.resolvedToolName,
    truncated: result.truncated,
    resultHandle: result.resultHandle,
    durationMs: result.durationMs,
  };
  const kept = result.warnings.length === 0 ? stored : { ...stored, warnings: [...result.warnings] };
  return loopRecord === undefined ? kept : { ...kept, loopRecord };
}
