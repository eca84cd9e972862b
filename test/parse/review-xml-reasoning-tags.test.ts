import { parseToolCalls } from '../../src/parse';

/**
 * A GLM or Qwen3-Coder XML value is raw text, not a JSON string: a reasoning tag in it (code that
 * strips `<think>` blocks, being written to a file) is quoted there, as in a JSON call's
 * arguments, and must neither open nor end a reasoning block that hides the call.
 */
const glm = (value: string): string => `<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>${value}</arg_value>\n</tool_call>`;
const qwen = (value: string): string =>
  `<tool_call>\n<function=write_file>\n<parameter=content>\n${value}\n</parameter>\n</function>\n</tool_call>`;

describe.each([
  ['GLM', glm, 'glm_xml'],
  ['Qwen3-Coder', qwen, 'qwen_xml'],
])('a reasoning tag quoted in a %s XML value', (_dialect, call, format) => {
  it.each([
    ['an opening tag', 'text = re.sub(r"<think>.*?", "", text)'],
    ['a closing tag, with no reasoning before the call', 'head, _, answer = text.partition("</think>")'],
    ['a closing tag, after a reasoning block', 'head, _, answer = text.partition("</think>")'],
  ])('%s is quoted, and the call is returned', (label, value) => {
    const prefix = label.endsWith('block') ? '<think>I will write the file.</think>\n' : 'Writing it.\n';
    const result = parseToolCalls(`${prefix}${call(value)}`);
    expect(result.calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).toEqual([['write_file', { content: value }]]);
    expect(result.remainingText).toBe(prefix.trim());
    expect(result.format).toBe(format);
  });

  it('a call drafted inside a reasoning block is still no call', () => {
    const text = `<think>Maybe ${call('rm -rf /')}</think>\nNo tool is needed.`;
    expect(parseToolCalls(text)).toEqual({ calls: [], remainingText: text, format: 'none' });
  });
});
