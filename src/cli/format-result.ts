import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName } from '../errors/dispatch-error';
import { terminalText, terminalWord } from '../events/terminal-text';

/**
 * Marks each line of a tool's output: dispatchctl's own lines after it (`  ! ` warnings) never
 * start with it, so an output line cannot pass for one, whatever it holds (`! loop warning`, a
 * look-alike of `!` such as U+01C3 or U+FF01, leading spaces).
 */
const OUTPUT_MARGIN = '  │';

/**
 * A result as readable lines: status, the output, and what dispatch noted about it. The call id,
 * the tool name, the output and the warnings come from the caller, the model or the tool: they are
 * shown escaped (terminalWord, terminalText; the output keeps its line breaks and tabs, each line
 * behind {@link OUTPUT_MARGIN}).
 */
export function formatResult(result: ToolResult): string {
  const flags = [
    `${result.attempts} attempt${result.attempts === 1 ? '' : 's'}`,
    `${result.durationMs} ms`,
    result.idempotentReplay ? 'replayed' : '',
    result.cached ? 'cached' : '',
    // A truncated result without a handle: the rest was never kept (cut by max_tool_output_chars, or not stored).
    result.truncated ? (result.resultHandle === '' ? 'truncated, the rest not kept' : `truncated, full text: dispatchctl read ${terminalWord(result.resultHandle)}`) : '',
  ].filter(Boolean);
  const head = result.isError
    ? `✗ ${terminalWord(result.toolCallId)} ${terminalWord(result.resolvedToolName)}: ${kindName(result.error?.kind ?? 0)} (${flags.join(', ')})`
    : `✓ ${terminalWord(result.toolCallId)} ${terminalWord(result.resolvedToolName)} (${flags.join(', ')})`;
  const lines = [head, ...terminalText(result.output, true).split('\n').map((line) => (line === '' ? OUTPUT_MARGIN : `${OUTPUT_MARGIN} ${line}`))];
  for (const warning of result.warnings) lines.push(`  ! ${terminalText(warning)}`);
  return lines.join('\n');
}
