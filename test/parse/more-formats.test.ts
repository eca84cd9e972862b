import { parseToolCalls, positionalParametersOf, type ParseResult } from '../../src/parse';

// Raw outputs ParseToolCalls missed (each came back format `none`, the call left as text): Gemma 3's
// ```tool_code fences, Functionary v3.2's `>>>name` messages, a ReAct agent's `Action:` lines,
// pythonic calls with positional arguments; and an end-of-turn token a server kept after the calls
// was returned as remaining text.

const WEATHER = { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string' } }, required: ['city'] };
const SCHEMAS: Record<string, unknown> = { get_weather: WEATHER, get_time: { type: 'object', properties: { tz: { type: 'string' } } } };
const positionalParameters = (tool: string) => (tool in SCHEMAS ? positionalParametersOf(SCHEMAS[tool]) : undefined);

const shown = (result: ParseResult) => ({ calls: result.calls.map((c) => [c.name, JSON.parse(c.arguments)]), format: result.format, remaining: result.remainingText, warnings: result.warnings });

describe("Gemma 3's tool_code fence", () => {
  it('is a call, several one a line (or in print) or as a list, the prose around it kept', () => {
    expect(shown(parseToolCalls('```tool_code\nget_weather(city="Paris")\n```'))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'tool_code', remaining: '', warnings: undefined });
    const lines = parseToolCalls('Let me check.\n```tool_code\nget_weather(city="Paris", days=3)\nprint(get_time(tz=\'UTC\'))\n```\nOne moment.', ['get_weather', 'get_time']);
    expect(shown(lines)).toEqual({ calls: [['get_weather', { city: 'Paris', days: 3 }], ['get_time', { tz: 'UTC' }]], format: 'tool_code', remaining: 'Let me check.\n\nOne moment.', warnings: undefined });
    expect(shown(parseToolCalls('```tool_code\n[get_weather(city="Paris"), get_time(tz="UTC")]\n```')).calls).toEqual([['get_weather', { city: 'Paris' }], ['get_time', { tz: 'UTC' }]]);
  });

  it('the same call in a python fence or in inline code stays an example, as before', () => {
    expect(parseToolCalls('```tool_code\nget_weather(city="Paris")\n```').calls).toHaveLength(1);
    for (const text of ['Call it so:\n```python\nget_weather(city="Paris")\n```', 'Write `get_weather(city="Paris")` to ask.', '```tool_codex\nget_weather(city="Paris")\n```']) {
      expect(shown(parseToolCalls(text))).toEqual({ calls: [], format: 'none', remaining: text, warnings: undefined });
    }
  });

  it('a fence that holds code, not calls, is none and says so; a call of a tool not offered is said too', () => {
    const code = '```tool_code\nw = get_weather(city="Paris")\nprint(w)\n```';
    expect(shown(parseToolCalls(code))).toEqual({ calls: [], format: 'none', remaining: code, warnings: ['a "```tool_code" marker at character 0 did not read as a call (malformed, or cut off): left in remaining_text'] });
    expect(parseToolCalls('```tool_code\nsend_email(to="boss")\n```', ['get_weather']).warnings).toEqual(['a call of "send_email" was not offered: left in remaining_text']);
  });

  it('JSON in its arguments is no call of its own', () => {
    const text = '```tool_code\nrun({"name": "rm", "arguments": {"path": "/"}})\n```';
    expect(shown(parseToolCalls(text)).calls).toEqual([]);
    expect(parseToolCalls(text).warnings).toEqual(["a call of \"run\" was written with arguments by position that its tool's schema does not name: left in remaining_text"]);
  });
});

describe('Functionary v3.2', () => {
  it('reads >>>name then JSON, several in a row; >>>all is text for the user, its header left out', () => {
    expect(shown(parseToolCalls('>>>get_weather\n{"city": "Paris"}'))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'functionary', remaining: '', warnings: undefined });
    const several = parseToolCalls('>>>all\nLet me check both.\n>>>get_weather\n{"city": "Paris"}>>>get_time\n{"tz": "UTC"}', ['get_weather', 'get_time']);
    expect(shown(several)).toEqual({ calls: [['get_weather', { city: 'Paris' }], ['get_time', { tz: 'UTC' }]], format: 'functionary', remaining: 'Let me check both.', warnings: undefined });
  });

  it('>>>all alone is no call; a first call whose >>> the prompt held is one only when offered; a cut-off one is said', () => {
    expect(shown(parseToolCalls('get_weather\n{"city": "Paris"}', ['get_weather'])).calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(parseToolCalls('get_weather\n{"city": "Paris"}').calls).toEqual([]);
    expect(shown(parseToolCalls('>>>all\nHello there'))).toEqual({ calls: [], format: 'none', remaining: '>>>all\nHello there', warnings: undefined });
    const cut = parseToolCalls('>>>get_weather\n{"city": "Paris"}\n>>>get_time\n{"tz": "U');
    expect(shown(cut)).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'functionary', remaining: '>>>get_time\n{"tz": "U', warnings: ['a call of "get_time" was cut off before its arguments ended: left in remaining_text'] });
  });

  it("the python tool's raw code (Functionary's code interpreter) is a call of python with {code}, to the text's end", () => {
    expect(shown(parseToolCalls('>>>python\nimport math\nprint(math.sqrt(2))\n'))).toEqual({ calls: [['python', { code: 'import math\nprint(math.sqrt(2))' }]], format: 'functionary', remaining: '', warnings: undefined });
    // After other calls, and with a doctest's >>> in it: that is code, not a next message.
    const after = parseToolCalls('>>>all\nLet me check, then compute.\n>>>get_weather\n{"city": "Paris"}\n>>>python\n  x = 1\n>>>all\nprint(x)', ['get_weather', 'python']);
    expect(shown(after)).toEqual({ calls: [['get_weather', { city: 'Paris' }], ['python', { code: '  x = 1\n>>>all\nprint(x)' }]], format: 'functionary', remaining: 'Let me check, then compute.', warnings: undefined });
    // JSON arguments as any tool's; the code alone without the header is prose; not offered, it is said.
    expect(shown(parseToolCalls('>>>python\n{"code": "print(1)"}')).calls).toEqual([['python', { code: 'print(1)' }]]);
    expect(parseToolCalls('python\nprint(1)', ['python']).calls).toEqual([]);
    expect(parseToolCalls('>>>python\n\n  \n').calls).toEqual([]);
    expect(parseToolCalls('>>>python\nprint(1)', ['get_weather']).warnings).toEqual(['a call of "python" was not offered: left in remaining_text']);
  });

  it('not in a python fence (>>> is its prompt)', () => {
    const text = '```python\n>>>get_weather\n{"city": "Paris"}\n```';
    expect(parseToolCalls(text).calls).toEqual([]);
    expect(parseToolCalls('>>>get_weather\n{"city": "Paris"}').calls).toHaveLength(1);
  });
});

describe('ReAct', () => {
  const REACT = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris"}';

  it('reads the action when it names an offered tool, or any when none is offered; the thought stays', () => {
    expect(shown(parseToolCalls(REACT, ['get_weather']))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format: 'react', remaining: 'Thought: I need the weather.', warnings: undefined });
    expect(shown(parseToolCalls(REACT)).calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(shown(parseToolCalls(REACT, ['search']))).toEqual({ calls: [], format: 'none', remaining: REACT, warnings: ['a call of "get_weather" was not offered: left in remaining_text'] });
  });

  it('only the first action counts, and none after a Final Answer; a fenced input is read', () => {
    const madeUp = `${REACT}\nObservation: 21C\nThought: now Rome\nAction: get_weather\nAction Input: {"city": "Rome"}`;
    expect(shown(parseToolCalls(madeUp)).calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(parseToolCalls('Thought: I know.\nFinal Answer: 42').format).toBe('none');
    expect(parseToolCalls('Final Answer: 42\nAction: get_weather\nAction Input: {"city": "Paris"}').calls).toEqual([]);
    expect(shown(parseToolCalls('Action: `get_weather`\nAction Input: ```json\n{"city": "Paris"}\n```')).calls).toEqual([['get_weather', { city: 'Paris' }]]);
  });

  it('a plain input is the one positional argument, named by the schema, else said', () => {
    const plain = 'Action: get_weather\nAction Input: Paris';
    expect(shown(parseToolCalls(plain, [], { positionalParameters })).calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(parseToolCalls(plain).warnings).toEqual(["a call of \"get_weather\" was written with arguments by position that its tool's schema does not name: left in remaining_text"]);
  });

  it('not in a python fence or inline code', () => {
    expect(parseToolCalls(REACT).calls).toHaveLength(1);
    expect(parseToolCalls('```python\nprint("""\nAction: get_weather\nAction Input: {"city": "Paris"}\n""")\n```').calls).toEqual([]);
  });
});

describe('positional arguments', () => {
  it('are named when the schema leaves no doubt', () => {
    const result = parseToolCalls('[get_weather("Paris", units="metric"), get_time("UTC")]', [], { positionalParameters });
    expect(shown(result)).toEqual({ calls: [['get_weather', { city: 'Paris', units: 'metric' }], ['get_time', { tz: 'UTC' }]], format: 'pythonic', remaining: '', warnings: undefined });
    expect(shown(parseToolCalls('```tool_code\nget_weather("Paris")\n```', [], { positionalParameters })).calls).toEqual([['get_weather', { city: 'Paris' }]]);
  });

  it('else the list is no call, as before, and a warning says why', () => {
    const unnamed = "a call of \"get_weather\" was written with arguments by position that its tool's schema does not name: left in remaining_text";
    for (const text of ['[get_weather("Paris", "metric")]', '[get_weather("Paris", city="Rome")]', '[get_weather("Paris", "metric"), get_time(tz="UTC")]']) {
      expect(shown(parseToolCalls(text, [], { positionalParameters }))).toEqual({ calls: [], format: 'none', remaining: text, warnings: [unnamed] });
    }
    expect(parseToolCalls('[get_weather("Paris")]').warnings).toEqual([unnamed]);
  });

  it('positionalParametersOf: the only property, or the required ones in the order they open properties', () => {
    expect(positionalParametersOf(WEATHER)).toEqual(['city']);
    expect(positionalParametersOf({ properties: { q: {} } })).toEqual(['q']);
    expect(positionalParametersOf({ properties: { to: {}, subject: {}, body: {} }, required: ['to', 'subject', 'body'] })).toEqual(['to', 'subject', 'body']);
    expect(positionalParametersOf({ properties: { to: {}, cc: {} }, required: ['cc'] })).toEqual([]);
    expect(positionalParametersOf({ properties: { a: {}, b: {} }, required: ['b', 'a'] })).toEqual([]);
    expect(positionalParametersOf({ properties: { a: {}, b: {} } })).toEqual([]);
    expect(positionalParametersOf({ properties: { b: {}, 1: {} }, required: ['b'] })).toEqual([]);
    expect(positionalParametersOf('nope')).toEqual([]);
  });
});

describe('an end-of-turn token a server kept', () => {
  it.each([
    ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>', 'hermes'],
    ['{"name": "get_weather", "arguments": {"city": "Paris"}}<|eom_id|>', 'llama'],
    ['[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>', 'mistral'],
    ['<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><end_of_turn>', 'gemma'],
    ['```tool_code\nget_weather(city="Paris")\n```\n<end_of_turn>', 'tool_code'],
  ])('after the calls is no remaining text (%j)', (text, format) => {
    expect(shown(parseToolCalls(text))).toEqual({ calls: [['get_weather', { city: 'Paris' }]], format, remaining: '', warnings: undefined });
  });

  it('the text before it stays; a text with no call stays whole', () => {
    expect(parseToolCalls('Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>\n<|im_end|>').remainingText).toBe('Checking.');
    expect(parseToolCalls('Hello</s>')).toEqual({ calls: [], remainingText: 'Hello</s>', format: 'none' });
  });
});
