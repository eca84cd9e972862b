import { Effect, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import { terminalText, terminalWord } from '../events/terminal-text';

/** The widest executor name (`builtin`), so that descriptions line up. */
const EXECUTOR_WIDTH = 7;

/** One line of `dispatchctl tools list`: name, effect, executor and description, in columns. */
export function formatToolLine(t: ToolSpec): string {
  const effect = t.effect === Effect.READ_ONLY ? 'read-only' : 'side-effect';
  const line = `${terminalWord(t.name).padEnd(24)} ${effect.padEnd(12)} ${(t.executor.case ?? '').padEnd(EXECUTOR_WIDTH)}  ${terminalText(t.description)}`;
  return line.trimEnd();
}
