import { parseToolCalls } from '../../src/parse';
import { callsOf, expectNoCalls } from './parse-helpers';

// Cohere's models name a call `tool_name` (its arguments `parameters`, its id `tool_call_id`);
// before, ParseToolCalls found no call in their action blocks (format none).

const ACTION = '[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n    {"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}\n]';

describe("Cohere's calls", () => {
  it("reads Command A's action block, keeps the model's ids, and leaves no empty block behind", () => {
    expect(parseToolCalls(`<|START_TEXT|>Checking.<|END_TEXT|><|START_ACTION|>${ACTION}<|END_ACTION|>`)).toEqual({
      calls: [
        { id: '0', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: '1', name: 'get_time', arguments: '{}' },
      ],
      remainingText: '<|START_TEXT|>Checking.<|END_TEXT|>',
      format: 'llama',
    });
  });

  it("reads Command R's fenced action", () => {
    expect(parseToolCalls('Action: ```json\n[\n    {\n        "tool_name": "get_weather",\n        "parameters": {"city": "Paris"}\n    }\n]\n```')).toMatchObject({
      calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      remainingText: 'Action:',
      format: 'markdown',
    });
  });

  it('ignores a call drafted in <|START_THINKING|>, which ends at its first <|END_THINKING|>', () => {
    const thinking = '<|START_THINKING|>I could call {"tool_name": "rm", "parameters": {}} but will not.<|END_THINKING|>';
    expect(parseToolCalls(`${thinking}<|START_ACTION|>${ACTION}<|END_ACTION|>`)).toMatchObject({ calls: [{ name: 'get_weather' }, { name: 'get_time' }], remainingText: thinking });
    expectNoCalls('<|START_THINKING|>I will call {"tool_name": "rm", "parameters": {}}');
    // Only the token as written opens it.
    expect(callsOf('<|start_thinking|> {"tool_name": "ok", "parameters": {}}')).toEqual([['ok', '{}']]);
  });

  it('takes a tool definition, or a tool_name without arguments in prose, for no call', () => {
    expectNoCalls('{"tool_name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object"}}');
    expectNoCalls('I found {"tool_name": "x"} in the logs.');
  });
});
