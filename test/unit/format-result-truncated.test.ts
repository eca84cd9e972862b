import { create } from '@bufbuild/protobuf';
import { ToolResultSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { formatResult } from '../../src/cli/format-result';

// Found in review: a result truncated without a handle (an output cut by max_tool_output_chars, or
// one whose whole text the store did not keep) was shown "truncated, full text: dispatchctl read ''",
// a command that can only fail.

const result = (resultHandle: string) => create(ToolResultSchema, { toolCallId: 'c1', resolvedToolName: 'echo', output: 'head ... tail', attempts: 1, durationMs: 3, truncated: true, resultHandle });

test('a truncated result with a handle names the command that reads the rest', () => {
  expect(formatResult(result('s1:abc')).split('\n')[0]).toBe('✓ c1 echo (1 attempt, 3 ms, truncated, full text: dispatchctl read s1:abc)');
});

test('a truncated result without one says the rest was not kept', () => {
  expect(formatResult(result('')).split('\n')[0]).toBe('✓ c1 echo (1 attempt, 3 ms, truncated, the rest not kept)');
});
