import { parseToolCalls } from '../../src/parse';

/**
 * Some Kimi K2 checkpoints write the section tokens in the singular (`<|tool_call_section_begin|>`;
 * vLLM's `kimi_k2` parser takes both spellings): the tokens around returned calls must not be
 * left in the remaining text.
 */
describe('Kimi K2 section tokens in the singular', () => {
  const call = (id: string, args: string): string => `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;

  it('are part of the calls returned', () => {
    const text = `Checking.\n<|tool_call_section_begin|>\n${call('functions.get_weather:0', '{"city":"Paris"}')}\n${call('functions.get_time:1', '{}')}\n<|tool_call_section_end|>`;
    expect(parseToolCalls(text)).toEqual({
      calls: [
        { id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'functions.get_time:1', name: 'get_time', arguments: '{}' },
      ],
      remainingText: 'Checking.',
      format: 'kimi',
    });
  });

  it('stay with a call not returned', () => {
    const first = `<|tool_call_section_begin|>${call('functions.a:0', '{}')}`;
    const result = parseToolCalls(`${first}${call('functions.b:1', '{}')}<|tool_call_section_end|>`, ['b']);
    expect(result.calls.map((c) => c.name)).toEqual(['b']);
    expect(result.remainingText).toBe(first);
  });
});
