import { callsOf, expectNoCalls } from './parse-helpers';

/**
 * Reasoning opened in the prompt (DeepSeek-R1 distills on a Hermes or Llama template) often
 * mentions the call tag its instructions name ("answer with a <tool_call> tag"). Such a mention,
 * followed by prose and never closed, was taken for a call running to the end of the text, so
 * every `</think>` after it looked quoted in that call: the reasoning was not masked, and a call
 * it drafted and then rejected was returned.
 */
describe('a call tag mentioned in prose in reasoning opened in the prompt', () => {
  const draft = '{"name": "get_weather", "arguments": {"city": "Paris"}}';

  it.each([
    ['<tool_call>', 'The tools section says to answer with a <tool_call> tag.'],
    ['<function=...>', 'Llama writes <function=name> tags for these.'],
  ])('%s does not stop the reasoning being masked', (_label, mention) => {
    const reasoning = `${mention} I could call ${draft}, but the user only said hello.\n</think>\n\n`;
    expectNoCalls(`${reasoning}Hello! How can I help?`);
    expect(callsOf(`${reasoning}<tool_call>{"name": "get_time", "arguments": {}}</tool_call>`)).toEqual([['get_time', '{}']]);
  });

  it('while a tag that begins a call still quotes what follows it', () => {
    expect(callsOf('<tool_call>\n```json\n{"name": "write_file", "arguments": {"content": "a </think> b"}}\n```\n</tool_call>')).toEqual([
      ['write_file', '{"content":"a </think> b"}'],
    ]);
    expect(callsOf('<function=write_file>{"content": "a </think> b"}</function>')).toEqual([['write_file', '{"content":"a </think> b"}']]);
  });
});
