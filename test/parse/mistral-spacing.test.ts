import { parseToolCalls } from '../../src/parse';

describe('Mistral name[ARGS] calls with a space before the tokens', () => {
  it.each([
    ['[ARGS]', '[TOOL_CALLS]get_weather [ARGS]{"city":"Paris"}', undefined],
    ['[CALL_ID] and [ARGS]', '[TOOL_CALLS]get_weather [CALL_ID]abc123456 [ARGS]{"city":"Paris"}', 'abc123456'],
  ])('%s', (_label, text, id) => {
    const result = parseToolCalls(text);
    expect(result.format).toBe('mistral');
    expect(result.calls.map((call) => [call.name, call.arguments])).toEqual([['get_weather', '{"city":"Paris"}']]);
    if (id !== undefined) expect(result.calls[0]?.id).toBe(id);
    expect(result.remainingText).toBe('');
  });
});
