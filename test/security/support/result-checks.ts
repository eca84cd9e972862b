import type { ToolResult } from '../../../gen/dispatch/v1/dispatch_pb';

/** The error kinds of the contract, by their short JSON names. */
export const KINDS = new Set(['UNKNOWN_TOOL', 'INVALID_ARGUMENTS', 'BLOCKED', 'BREAKER_OPEN', 'TIMEOUT', 'UNAVAILABLE', 'TOOL_ERROR', 'UNEXPECTED', 'IN_PROGRESS', 'OUTCOME_UNKNOWN', 'STORE_UNAVAILABLE', 'LOOP_BLOCKED', 'CANCELLED']);

/**
 * The problems with a result, or [] when it is well-formed: answers the call it is for (attempts 0 only for calls refused before running), and an error
 * result's output is the error JSON a model reads (error, tool, kind, message, recoverable, attempts).
 */
export function resultProblems(result: ToolResult, callId: string, maxChars: number): string[] {
  const problems: string[] = [];
  if (result.toolCallId !== callId) problems.push(`answers ${result.toolCallId} instead of ${callId}`);
  if (typeof result.output !== 'string') problems.push('output is not a string');
  if ([...result.output].length > maxChars) problems.push(`output has ${[...result.output].length} characters, over ${maxChars}`);
  if (result.attempts > 5 || (result.attempts === 0 && !result.isError)) problems.push(`attempts ${result.attempts}`);
  if (result.truncated !== (result.resultHandle !== '')) problems.push('truncated without a handle, or a handle without truncation');
  if (!result.isError) return problems;
  let error: Record<string, unknown>;
  try {
    error = JSON.parse(result.output) as Record<string, unknown>;
  } catch {
    return [...problems, `error output is not JSON: ${result.output.slice(0, 200)}`];
  }
  if (error.error !== true) problems.push('error JSON lacks error: true');
  if (!KINDS.has(error.kind as string)) problems.push(`unknown kind ${String(error.kind)}`);
  if (typeof error.message !== 'string' || error.message === '') problems.push('error JSON has no message');
  if (typeof error.recoverable !== 'boolean') problems.push('error JSON has no recoverable');
  return problems;
}
