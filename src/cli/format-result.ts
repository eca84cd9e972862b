import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName } from '../errors';

/** A result as readable lines: status, the output, and what dispatch noted about it. */
export function formatResult(result: ToolResult): string {
  const flags = [
    `${result.attempts} attempt${result.attempts === 1 ? '' : 's'}`,
    `${result.durationMs} ms`,
    result.idempotentReplay ? 'replayed' : '',
    result.cached ? 'cached' : '',
    result.truncated ? `truncated, full text: dispatchctl read ${result.resultHandle}` : '',
  ].filter(Boolean);
  const head = result.isError
    ? `✗ ${result.toolCallId} ${result.resolvedToolName}: ${kindName(result.error?.kind ?? 0)} (${flags.join(', ')})`
    : `✓ ${result.toolCallId} ${result.resolvedToolName} (${flags.join(', ')})`;
  const lines = [head, `  ${result.output.replace(/\n/g, '\n  ')}`];
  for (const warning of result.warnings) lines.push(`  ! ${warning}`);
  return lines.join('\n');
}
