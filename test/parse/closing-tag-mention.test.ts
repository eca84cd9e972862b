import { callsOf, expectNoCalls } from './parse-helpers';

/**
 * In reasoning opened in the prompt (DeepSeek-R1, QwQ: only `</think>` in the output), the
 * reasoning may mention the closing tag in a sentence ("end reasoning with </think> and then
 * answer"). That mention ended the block, so a call drafted after it, before the `</think>` the
 * template writes on a line of its own, was returned beside the real call.
 */
describe('a mention of </think> in reasoning opened in the prompt', () => {
  const draft = '{"name": "delete_all", "arguments": {}}';
  const reasoning = `Okay, the format says to end reasoning with </think> and then call a tool. I could call ${draft} but no, listing is safer.\n</think>\n\n`;

  it('does not end the reasoning: a call drafted after it stays hidden', () => {
    expect(callsOf(`${reasoning}{"name": "list_files", "arguments": {}}`)).toEqual([['list_files', '{}']]);
    expect(callsOf(`${reasoning}<tool_call>{"name": "list_files", "arguments": {}}</tool_call>`)).toEqual([['list_files', '{}']]);
    expectNoCalls(`${reasoning}Nothing to do.`);
  });

  it('but a closing tag after the last words of the reasoning still ends it', () => {
    expect(callsOf(`Maybe ${draft}? No, list.</think>\n{"name": "list_files", "arguments": {}}`)).toEqual([['list_files', '{}']]);
    expect(callsOf(`Maybe ${draft}? No.</think>{"name": "list_files", "arguments": {}}`)).toEqual([['list_files', '{}']]);
    expect(callsOf(`Maybe ${draft}? No. </think> Listing: {"name": "list_files", "arguments": {}}`)).toEqual([['list_files', '{}']]);
  });
});

/**
 * A text that opens its reasoning itself (`<think>`, `<thinking>`, `[THINK]`, gpt-oss's analysis
 * channel) had none opened in the prompt, yet a `</think>` with no `<think>` before it was taken
 * for the end of such a block, from the start of the text: inside `[THINK]` reasoning it cut the
 * block short and exposed a draft after it; after a closed block it hid the answer's call.
 */
describe('a stray </think> in a text that opens its own reasoning', () => {
  const draft = '{"name": "run_tests", "arguments": {"all": true}}';

  it.each([
    ['[THINK]', (body: string) => `[THINK]${body}[/THINK]`],
    ['<thinking>', (body: string) => `<thinking>\n${body}\n</thinking>\n`],
    ['the analysis channel', (body: string) => `<|channel|>analysis<|message|>${body}<|end|><|start|>assistant<|channel|>final<|message|>`],
  ])('does not end %s reasoning', (_label, wrap) => {
    expectNoCalls(wrap(`The parser splits on </think> to drop the reasoning. I could call ${draft} but the user only asked.`) + 'It keeps what follows.');
  });

  it('does not hide the call after a closed <think> block', () => {
    const call = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    expect(callsOf(`<think>Done.</think>\n${call}\nNote: I wrote </think> above.`)).toEqual([['get_time', '{}']]);
    expect(callsOf(`\n<think>\nDone.\n</think>\n${call}\n</think>`)).toEqual([['get_time', '{}']]);
  });
});

/**
 * The same mention in a block the model opened itself (Qwen3 writes `<think>`): it balanced the
 * opening tag and ended the block there, exposing what the reasoning drafted after it.
 */
describe('a mention of </think> in a <think> block', () => {
  const draft = '{"name": "run_tests", "arguments": {"all": true}}';
  const thinking = `<think>\nThe helper splits on </think> and keeps the rest. I could run ${draft} first, but no.\n</think>\n\n`;

  it('does not end the block: a call drafted after it stays hidden', () => {
    expectNoCalls(`${thinking}The helper keeps what follows the tag.`);
    expect(callsOf(`${thinking}<tool_call>{"name": "get_time", "arguments": {}}</tool_call>`)).toEqual([['get_time', '{}']]);
  });

  it('but a closing tag after its last words still ends it, and so does one with no later line of its own', () => {
    const call = '{"name": "get_time", "arguments": {}}';
    expect(callsOf(`<think>Done.</think> Here: ${call} I wrote </think>\n`)).toEqual([['get_time', '{}']]);
    expect(callsOf(`<think>I use </think> here. Done.\n</think>\n${call}\nNote: it ends with </think> as usual.`)).toEqual([['get_time', '{}']]);
  });
});
