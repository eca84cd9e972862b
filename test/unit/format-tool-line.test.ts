import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { formatToolLine } from '../../src/cli/format-tool';

// dispatchctl tools list: one line per tool, its description in one column whatever the executor
// (`builtin` and `http` printed their descriptions 3 columns apart), no trailing blanks.

const line = (executor: 'builtin' | 'http' | 'worker' | 'mcp', description = 'Does it.') =>
  formatToolLine(create(ToolSpecSchema, { name: 't', description, effect: Effect.READ_ONLY, executor: { case: executor, value: {} } }));

test('the description starts in the same column for every executor', () => {
  const columns = (['builtin', 'http', 'worker', 'mcp'] as const).map((executor) => line(executor).indexOf('Does it.'));
  expect(new Set(columns).size).toBe(1);
  expect(line('http')).toBe(`${'t'.padEnd(24)} ${'read-only'.padEnd(12)} http     Does it.`);
});

test('a tool without a description leaves no trailing blanks', () => {
  expect(line('builtin', '')).toBe(`${'t'.padEnd(24)} ${'read-only'.padEnd(12)} builtin`);
});
