import { parseToolCalls } from '../../src/parse';

// Models whose calls a dialect here reads, inside tokens of their own: the calls were found, but
// their wrapper tokens stayed in remaining_text (`<tool_calls></tool_calls>`, `functools`), which a
// backend puts in the conversation as the assistant's text.

const WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}';

describe('wrapper tokens around calls leave remaining_text with the calls', () => {
  it.each([
    ['IBM Granite 3', `<|tool_call|>[${WEATHER}]`],
    ['Phi-4-mini', `functools[${WEATHER}]`],
    ['Jamba and Hunyuan', `<tool_calls>[${WEATHER}]</tool_calls>`],
    ['InternLM', `<|action_start|><|plugin|>\n${WEATHER.replace('arguments', 'parameters')}<|action_end|>`],
    ['LongCat', `<longcat_tool_call>${WEATHER}</longcat_tool_call>`],
    ['Seed-OSS', '<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</seed:tool_call>'],
  ])('%s', (_, text) => {
    expect(parseToolCalls(`I will look.\n${text}\nDone.`)).toMatchObject({
      calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      remainingText: 'I will look.\n\nDone.',
    });
  });

  it('takes the closing token after the last of several spans inside one wrapper', () => {
    const text = '<seed:tool_call>\n<function=a>\n</function>\n<function=b>\n</function>\n</seed:tool_call>\ndone';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'a' }, { name: 'b' }], remainingText: 'done' });
  });

  it('keeps wrapper tokens that are not right around returned calls', () => {
    const apart = `Explain <tool_calls> then ${WEATHER} and </tool_calls>`;
    expect(parseToolCalls(apart).remainingText).toBe('Explain <tool_calls> then  and </tool_calls>');
    // A closing token with no opening one before the calls is text.
    expect(parseToolCalls(`see ${WEATHER} </tool_calls>`).remainingText).toBe('see  </tool_calls>');
    // A call not returned keeps its text, and the wrapper around it.
    const two = '<seed:tool_call>\n<function=a>\n</function>\n<function=b>\n</function>\n</seed:tool_call>';
    expect(parseToolCalls(two, ['b'])).toMatchObject({ calls: [{ name: 'b' }], remainingText: '<seed:tool_call>\n<function=a>\n</function>\n\n</seed:tool_call>' });
    expect(parseToolCalls(two, ['a'])).toMatchObject({ calls: [{ name: 'a' }], remainingText: '<function=b>\n</function>\n</seed:tool_call>' });
  });
});
