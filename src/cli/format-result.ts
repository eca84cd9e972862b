import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName } from '../errors';
import { terminalText, terminalWord } from '../events';

/**
 * A result as readable lines: status, the output, and what dispatch noted about it. The call id,
 * the tool name, the output and the warnings come from the caller, the model or the tool: they are
 * shown escaped (terminalWord, terminalText; the output keeps its line breaks and tabs).
 */
export function formatResult(result: ToolResult): string {
  const flags = [
    `${result.attempts} attempt${result.attempts === 1 ? '' : 's'}`,
    `${result.durationMs} ms`,
    result.idempotentReplay ? 'replayed' : '',
    result.cached ? 'cached' : '',
    result.truncated ? `truncated, full text: dispatchctl read ${terminalWord(result.resultHandle)}` : '',
  ].filter(Boolean);
  const head = result.isError
    ? `✗ ${terminalWord(result.toolCallId)} ${terminalWord(result.resolvedToolName)}: ${kindName(result.error?.kind ?? 0)} (${flags.join(', ')})`
    : `✓ ${terminalWord(result.toolCallId)} ${terminalWord(result.resolvedToolName)} (${flags.join(', ')})`;
  const lines = [head, `  ${terminalText(result.output, true).replace(/\n/g, '\n  ')}`];
  for (const warning of result.warnings) lines.push(`  ! ${terminalText(warning)}`);
  return lines.join('\n');
}
