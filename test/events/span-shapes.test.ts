import { SpanKind } from '@opentelemetry/api';
import { attemptSpan, callSpan } from '../../src/events/span-shapes';

const info = (tool: string) => ({ toolCallId: 'call_1', tool, arguments: '{}' });

describe('span shapes', () => {
  test('name calls and attempts by tool, the same text whether the name was kept or built, past the kept names too', () => {
    for (let i = 0; i < 1100; i++) {
      const tool = `tool_${i}`;
      for (let twice = 0; twice < 2; twice++) {
        expect(callSpan(info(tool), 1, false).name).toBe(`execute_tool ${tool}`);
        expect(attemptSpan(1, tool, tool, 'read_only', 1, false).name).toBe(`tool_attempt ${tool}`);
      }
    }
  });

  test('carry their attributes only when traced', () => {
    expect(callSpan(info('echo'), 5, true)).toEqual({
      name: 'execute_tool echo',
      kind: SpanKind.INTERNAL,
      startMs: 5,
      parent: true,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo', 'gen_ai.tool.call.id': 'call_1' },
    });
    expect(callSpan(info('echo'), 5, false).attributes).toBeUndefined();
    expect(attemptSpan(2, 'backup', 'echo', 'read_only', 5, true).attributes).toEqual({ 'dispatch.attempt': 2, 'dispatch.effect': 'read_only', 'gen_ai.tool.name': 'backup' });
  });
});
