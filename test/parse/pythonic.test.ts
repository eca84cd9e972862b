import { parseToolCalls } from '../../src/parse';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { callsOf, expectNoCalls } from './parse-helpers';

// Llama 3.2 and 4 under a pythonic template, and Liquid LFM2, write calls as a Python list of
// calls with keyword arguments; before, ParseToolCalls found no call in them (format none).

describe('pythonic calls', () => {
  it('reads a whole text that is a list of calls, in order, with its format', () => {
    expect(parseToolCalls('[get_weather(city="Paris", days=3), get_time()]')).toEqual({
      calls: [
        { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_weather', arguments: '{"city":"Paris","days":3}' },
        { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), name: 'get_time', arguments: '{}' },
      ],
      remainingText: '',
      format: 'pythonic',
    });
    expect(callsOf('\n [ f( a = 1 , ) , ]\n')).toEqual([['f', '{"a":1}']]);
  });

  it("reads Llama 4's <|python_start|> and LFM2's <|tool_call_start|> lists anywhere, with their closing tokens", () => {
    expect(parseToolCalls("<|python_start|>[get_weather(city='Paris')]<|python_end|>")).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: '' });
    const lfm = 'Let me look.\n<|tool_call_start|>[get_status(candidate_id="12345")]<|tool_call_end|>Checking candidate 12345.';
    expect(parseToolCalls(lfm)).toMatchObject({ calls: [{ name: 'get_status', arguments: '{"candidate_id":"12345"}' }], remainingText: 'Let me look.\nChecking candidate 12345.' });
    expect(callsOf('<|tool_call_start|>[a(x=1)]<|tool_call_end|> then <|tool_call_start|>[b(y=2)]')).toEqual([
      ['a', '{"x":1}'],
      ['b', '{"y":2}'],
    ]);
  });

  it("reads Olmo 3's calls, one a line in <function_calls>, up to its closing tag or the text's end", () => {
    const text = 'I will check.\n<function_calls>\nget_weather(city="Paris", units=null)\nget_time()\n</function_calls>\nDone.';
    expect(parseToolCalls(text)).toMatchObject({ calls: [{ name: 'get_weather', arguments: '{"city":"Paris","units":null}' }, { name: 'get_time', arguments: '{}' }], remainingText: 'I will check.\n\nDone.', format: 'pythonic' });
    expect(callsOf('<function_calls>\n[a(x=1), b()]\n</function_calls>')).toEqual([['a', '{"x":1}'], ['b', '{}']]);
    expect(callsOf('<function_calls>\na(x=1)\n')).toEqual([['a', '{"x":1}']]);
    // Prose among the calls, a call cut off, or tags of another dialect: no call at all.
    expectNoCalls('<function_calls>\na(x=1)\nand then\n</function_calls>');
    expectNoCalls('<function_calls>\na(x=1)\nb(y=\n');
    expectNoCalls('<function_calls></function_calls>');
  });

  it('reads Python literals: True, False, None, single quotes and escapes, lists, dicts, numbers as written', () => {
    const text = `[f(a=True, b=False, c=None, d='it\\'s', e="C:\\\\tmp", g=[1, {'k': 'v'}], h={"x": None}, n=-2.50, m=1e3)]`;
    expect(callsOf(text)).toEqual([['f', '{"a":true,"b":false,"c":null,"d":"it\'s","e":"C:\\\\tmp","g":[1,{"k":"v"}],"h":{"x":null},"n":-2.50,"m":1e3}']]);
    expect(callsOf('[web.search(query="x")]')).toEqual([['web.search', '{"query":"x"}']]);
  });

  it('takes a list in prose, or in code, for no call, as vLLM does', () => {
    expectNoCalls("Here is how: [get_weather(city='Paris')]");
    expectNoCalls("[get_weather(city='Paris')] is what I would call.");
    expectNoCalls('[1, 2, 3]');
    expectNoCalls('[]');
  });

  it('takes a list that is not calls with keyword literals, or is cut off, for no call at all', () => {
    for (const text of [
      "[get_weather('Paris')]",
      "[get_weather(city='Paris', city='Rome')]",
      '[f(a=1 + 2)]',
      '[f(a==1)]',
      '[f(a=b)]',
      "[f(a=1), g('x')]",
      "[get_weather(city='Paris')",
      "[get_weather(city='Par",
      "<|tool_call_start|>[get_weather(city='Paris'",
    ]) {
      expectNoCalls(text);
    }
  });

  it('takes a list of more than 1,024 calls for none', () => {
    const list = (n: number) => `[${Array.from({ length: n }, (_, i) => `f(i=${i})`).join(', ')}]`;
    expect(parseToolCalls(list(1024)).calls).toHaveLength(1024);
    expectNoCalls(list(1025));
  });

  it('ignores a list drafted in reasoning, and a reasoning tag quoted in an argument', () => {
    expect(parseToolCalls("<think>maybe [rm(path='/')]</think>\n[get_weather(city='Paris')]")).toMatchObject({ calls: [{ name: 'get_weather' }], remainingText: "<think>maybe [rm(path='/')]</think>" });
    expect(callsOf("<|tool_call_start|>[note(text='a <think> tag')]<|tool_call_end|>")).toEqual([['note', '{"text":"a <think> tag"}']]);
  });

  it('returns only offered tools, and a dict argument is no call of its own', () => {
    expect(callsOf('[rm(path="/"), get_time()]', ['get_time'])).toEqual([['get_time', '{}']]);
    expect(callsOf("[wrap(spec={'name': 'rm', 'arguments': {'path': '/'}})]", ['rm'])).toEqual([]);
  });
});

describe('over the wire: ParseToolCalls, then Dispatch', () => {
  let tools: ToolServer;
  let d: TestDispatch;

  beforeAll(async () => {
    tools = await startToolServer({ '/weather': json({ temp: 21 }) });
    d = await startDispatch(`
tools:
  - name: get_weather
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"},"metric":{"type":"boolean"}},"required":["city"],"additionalProperties":false}'
    http: { url: "${tools.url}/weather" }
`);
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test('the tool receives the arguments the model wrote as Python', async () => {
    const text = "<|python_start|>[get_weather(city='Paris', metric=True), get_weather(city=\"Rome\")]<|python_end|>";
    const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: ['get_weather'] });
    expect(parsed.format).toBe('pythonic');
    const calls = parsed.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
    const reply = await d.dispatch.dispatch({ sessionId: 'pythonic-wire', calls, offeredTools: ['get_weather'] });
    expect(reply.results.map((r) => [r.isError, r.output])).toEqual([
      [false, '{"temp":21}'],
      [false, '{"temp":21}'],
    ]);
    expect(tools.received.map((r) => r.body.arguments)).toEqual([{ city: 'Paris', metric: true }, { city: 'Rome' }]);
  });
});
