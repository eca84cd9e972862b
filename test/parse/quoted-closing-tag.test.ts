import { callsOf, expectNoCalls } from './parse-helpers';

/**
 * A coding agent (Qwen3 and the like) working on code that handles reasoning mentions `<think>`
 * in its reasoning, then writes a call whose arguments quote `</think>`. The mention paired as a
 * nested block with the reasoning's own `</think>`, so the block ran on to the `</think>` quoted in
 * the call's arguments: the whole call was blanked out and the parse found nothing.
 */
describe('a </think> quoted in a call after reasoning that mentions <think>', () => {
  const content = 'def strip(s):\n    return s.split("</think>")[-1]\n';
  const call = `<tool_call>\n${JSON.stringify({ name: 'write_file', arguments: { path: 'strip.py', content } })}\n</tool_call>`;
  const expected = [['write_file', JSON.stringify({ path: 'strip.py', content })]];

  it('does not hide the call', () => {
    const thinking = '<think>\nThe user wants to remove the <think> block from model replies. A split on the closing tag is enough.\n</think>\n\n';
    expect(callsOf(thinking + call)).toEqual(expected);
  });

  it('in any dialect, and in reasoning opened in the prompt', () => {
    const args = '{"note": "ends with </think>"}';
    const mention = 'Reasoning goes in <think> blocks, I said <think> twice.\n</think>\n\n';
    expect(callsOf(`<think>\n${mention}<function=write_note>${args}</function>`)).toEqual([['write_note', '{"note":"ends with </think>"}']]);
    expect(callsOf(`${mention}[TOOL_CALLS]write_note[ARGS]${args}`)).toEqual([['write_note', '{"note":"ends with </think>"}']]);
    expect(callsOf(`${mention}{"name": "write_note", "arguments": ${args}}`)).toEqual([['write_note', '{"note":"ends with </think>"}']]);
  });

  it('while a draft in the reasoning stays hidden, and real nesting still holds', () => {
    const draft = '{"name": "delete_all", "arguments": {}}';
    expect(callsOf(`<think>\nStrip the <think> block? Maybe ${draft}. No.\n</think>\n\n${call}`)).toEqual(expected);
    expectNoCalls(`<think>a <think>b</think> maybe ${draft} </think> Done: s.split("</think>")`);
  });
});
