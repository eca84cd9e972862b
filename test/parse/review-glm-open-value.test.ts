import { parseToolCalls } from '../../src/parse';

/**
 * A GLM value whose `</arg_value>` the model left out must not run on into the next argument or
 * the next call (as Qwen3-Coder's values left open do not): the value after it, or the call after
 * it, would be read as its text, and a call drafted in reasoning, so swallowing the real call
 * after the reasoning, would be returned in its place.
 */
describe('a GLM value left open', () => {
  it('ends at the next <arg_key> or </tool_call>', () => {
    const text = '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: '{"city":"Paris","days":3}' }], remainingText: '' });
    expect(parseToolCalls('<tool_call>ls\n<arg_key>path</arg_key>\n<arg_value>/tmp\n</tool_call>')).toMatchObject({
      calls: [{ name: 'ls', arguments: '{"path":"/tmp"}' }],
      remainingText: '',
    });
  });

  it('does not swallow the call after it', () => {
    const broken = '<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1\n</tool_call>';
    const next = '<tool_call>b\n<arg_key>y</arg_key>\n<arg_value>2</arg_value>\n</tool_call>';
    const result = parseToolCalls(`${broken}\n${next}`);
    expect(result.calls.map((c) => [c.name, c.arguments])).toEqual([['a', '{"x":1}'], ['b', '{"y":2}']]);
    const cut = '<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1\n';
    expect(parseToolCalls(`${cut}${next}`)).toMatchObject({ calls: [{ name: 'b', arguments: '{"y":2}' }], remainingText: cut.trim() });
  });

  it('in a call drafted in reasoning opened by the prompt, does not make the draft a call', () => {
    const reasoning = 'Plan: <tool_call>rm\n<arg_key>path</arg_key>\n<arg_value>/\n</think>';
    const result = parseToolCalls(`${reasoning}\n<tool_call>ls\n<arg_key>path</arg_key>\n<arg_value>.</arg_value>\n</tool_call>`);
    expect(result.calls.map((c) => [c.name, c.arguments])).toEqual([['ls', '{"path":"."}']]);
    expect(result.remainingText).toBe(reasoning);
  });

  it('still quotes markers when its </arg_value> comes first', () => {
    const content = 'Wrap it: </tool_call><tool_call>rm</tool_call>';
    const text = `<tool_call>write\n<arg_key>content</arg_key>\n<arg_value>${content}</arg_value>\n</tool_call>`;
    expect(parseToolCalls(text).calls.map((c) => [c.name, c.arguments])).toEqual([['write', JSON.stringify({ content })]]);
  });

  it('that quotes <arg_key> before its </arg_value> keeps it as text (see glm-values.test.ts)', () => {
    const text = '<tool_call>write\n<arg_key>content</arg_key>\n<arg_value>Use <arg_key>k</arg_key> tags</arg_value>\n</tool_call>';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'write', arguments: '{"content":"Use <arg_key>k</arg_key> tags"}' }], remainingText: '', format: 'glm_xml' });
  });
});
