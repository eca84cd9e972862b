import { MAX_TOOL_NAME_CHARS } from '../registry/validate-spec';
import { invalidArgument } from './grpc-adapter';

/**
 * Refuses an offered tool name longer than any tool's (INVALID_ARGUMENT naming its index): it names
 * no tool, and each call of a tool not offered lists some of them back. Dispatch and ParseToolCalls.
 */
export function checkOfferedNames(names: readonly string[]): void {
  for (let i = 0; i < names.length; i++) {
    const length = names[i]!.length;
    if (length > MAX_TOOL_NAME_CHARS) {
      throw invalidArgument(`offered_tools[${i}]`, `offered_tools[${i}] is ${length} characters long, over the limit of ${MAX_TOOL_NAME_CHARS} of a tool name`);
    }
  }
}
