import { parseToolCalls, positionalParametersOf, type ParseResult } from '../../src/parse';

// Raw outputs ParseToolCalls missed (each came back format `none`, or with the wrong tool name):
// LangChain's JSON agents' `{"action", "action_input"}` blob, and Gemini's `default_api.` module
// before a tool's name, in a tool_code fence, a pythonic list or a line of its own.

const WEATHER = { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string' } }, required: ['city'] };
const SCHEMAS: Record<string, unknown> = { get_weather: WEATHER, get_time: { type: 'object', properties: { tz: { type: 'string' } } } };
const positionalParameters = (tool: string) => (tool in SCHEMAS ? positionalParametersOf(SCHEMAS[tool]) : undefined);

const shown = (result: ParseResult) => ({ calls: result.calls.map((c) => [c.name, JSON.parse(c.arguments)]), format: result.format, remaining: result.remainingText, warnings: result.warnings });
const none = (text: string) => ({ calls: [], format: 'none', remaining: text, warnings: undefined });

describe("LangChain's JSON agents' action blob", () => {
  it("the structured-chat agent's: after an Action: line, fenced; the Thought stays as text", () => {
    const text = 'Thought: I need the weather.\nAction:\n```\n{\n  "action": "get_weather",\n  "action_input": {"city": "Paris"}\n}\n```';
    expect(shown(parseToolCalls(text, ['get_weather']))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'react_json', remaining: 'Thought: I need the weather.', warnings: undefined });
  });

  it("the JSON-chat agent's: a json fence alone, or a bare blob", () => {
    expect(shown(parseToolCalls('```json\n{"action": "get_time", "action_input": {"tz": "UTC"}}\n```'))).toEqual({ calls: [['get_time', { tz: 'UTC' }]], format: 'react_json', remaining: '', warnings: undefined });
    expect(shown(parseToolCalls('{"action": "get_time", "action_input": {}}')).calls).toEqual([['get_time', {}]]);
    expect(shown(parseToolCalls('{"action": "get_time", "action_input": null}')).calls).toEqual([['get_time', {}]]);
  });

  it('a text input is the one positional argument, when the schema names it; else a warning', () => {
    const text = '```json\n{"action": "get_weather", "action_input": "Paris"}\n```';
    expect(shown(parseToolCalls(text, [], { positionalParameters })).calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(shown(parseToolCalls(text))).toEqual({ ...none(text), warnings: ["a call of \"get_weather\" was written with arguments by position that its tool's schema does not name: left in remaining_text"] });
  });

  it('only the first blob counts: the Observation and action after it the model made up', () => {
    const made = 'Observation: sunny\nAction:\n```\n{"action": "get_time", "action_input": {}}\n```';
    const text = `Action:\n\`\`\`\n{"action": "get_weather", "action_input": {"city": "Paris"}}\n\`\`\`\n${made}`;
    expect(shown(parseToolCalls(text))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'react_json', remaining: made, warnings: undefined });
  });

  it('a Final Answer is the answer, no call, and no action after it is one', () => {
    for (const text of ['{"action": "Final Answer", "action_input": "It is sunny."}', 'Action:\n```\n{"action": "Final Answer", "action_input": "Sunny"}\n```\n{"action": "get_time", "action_input": {}}']) {
      expect(shown(parseToolCalls(text))).toEqual(none(text));
    }
  });

  it('JSON with other keys, or in a python fence, is data, not a call', () => {
    for (const text of ['Logged: {"action": "delete", "action_input": 3, "user": 4}', 'Sure:\n```python\nx = {"action": "get_weather", "action_input": {"city": "Paris"}}\n```', '{"action": 3, "action_input": {}}']) {
      expect(shown(parseToolCalls(text))).toEqual(none(text));
    }
  });

  it('a blob cut off in its input is no call, and says so', () => {
    const text = 'Action:\n```json\n{"action": "get_weather", "action_input": {"city": "Par';
    expect(shown(parseToolCalls(text))).toEqual({ ...none(text), warnings: ['a call of "get_weather" was cut off before its arguments ended: left in remaining_text'] });
  });

  it('a tool not offered stays, with a warning', () => {
    const text = '{"action": "send_email", "action_input": {"to": "boss"}}';
    expect(shown(parseToolCalls(text, ['get_weather']))).toEqual({ ...none(text), warnings: ['a call of "send_email" was not offered: left in remaining_text'] });
  });
});

describe("Gemini's default_api module", () => {
  it('is no part of the tool name, in a tool_code fence or a pythonic list', () => {
    expect(shown(parseToolCalls('```tool_code\nprint(default_api.get_weather(city="Paris"))\n```', ['get_weather']))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'tool_code', remaining: '', warnings: undefined });
    expect(shown(parseToolCalls('[default_api.get_weather(city="Paris"), default_api.get_time()]', ['get_weather', 'get_time'])).calls).toEqual([['get_weather', { city: 'Paris' }], ['get_time', {}]]);
  });

  it('marks calls written on lines of their own, without the fence: a run of them is one span', () => {
    const text = 'I will check.\ndefault_api.get_weather(city="Paris")\nprint(default_api.get_time())\nOne moment.';
    expect(shown(parseToolCalls(text))).toEqual({ calls: [['get_weather', { city: 'Paris' }], ['get_time', {}]], format: 'tool_code', remaining: 'I will check.\n\nOne moment.', warnings: undefined });
    expect(shown(parseToolCalls('default_api.get_weather("Paris")', [], { positionalParameters })).calls).toEqual([['get_weather', { city: 'Paris' }]]);
  });

  it('in prose, in a line with more, or in a python fence, it is text', () => {
    for (const text of ['You can call default_api.get_weather(city="Paris") yourself.', 'default_api.get_weather(city="Paris") and then more', '```python\ndefault_api.get_weather(city="Paris")\n```', 'default_api.get_weather(city=)']) {
      expect(shown(parseToolCalls(text))).toEqual(none(text));
    }
  });

  it('a tool named without the module is the same tool: both ways give one name', () => {
    expect(parseToolCalls('[get_weather(city="Paris")]').calls[0]!.name).toBe(parseToolCalls('[default_api.get_weather(city="Paris")]').calls[0]!.name);
  });
});
