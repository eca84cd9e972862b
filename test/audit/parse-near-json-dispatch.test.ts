import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// Over the wire, as a backend runs a local model: ParseToolCalls on the near-JSON local models
// write (single quotes, Python True/False/None, trailing commas, unquoted keys, arguments as a JSON
// string, numbers as strings, a bare value for a list, nested objects as JSON text), then Dispatch
// of the calls as found, to lenient tools, in both modes: each call runs on the arguments the schema
// asks for, with every repair and default in its warnings. (An audit of issue 8: no test fed
// ParseToolCalls' tolerant output to lenient repair.)

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(`
tools:
  - name: get_weather
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","default":1},"units":{"type":"string","enum":["celsius","fahrenheit"]},"detailed":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},"opts":{"type":"object","properties":{"lang":{"type":"string"},"limit":{"type":"integer"}}}},"required":["city"],"additionalProperties":false}'
    builtin: { name: echo }
  - name: search
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer"}},"required":["query"]}'
    builtin: { name: echo }
`);
});
afterAll(async () => {
  await d.close();
});

/** The calls ParseToolCalls found, as Dispatch takes them: id, name and arguments text unchanged. */
const asCalls = (calls: readonly { id: string; name: string; arguments: string }[]) => calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));

const cases: [string, string, unknown, string[]][] = [
  [
    'Hermes, single quotes, Python literals, a trailing comma',
    `<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Oslo', 'days': '3', 'detailed': True, 'units': None,}}</tool_call>`,
    { city: 'Oslo', days: 3, detailed: true },
    ['repaired /days: "3" -> 3 (string to number)', 'repaired /units: null dropped (optional field)'],
  ],
  [
    'unquoted keys, a bare value for a list',
    `<tool_call>{name: "get_weather", arguments: {city: "Oslo", days: "3", tags: "rain"}}</tool_call>`,
    { city: 'Oslo', days: 3, tags: ['rain'] },
    ['repaired /days: "3" -> 3 (string to number)', 'repaired /tags: "rain" -> ["rain"] (bare value wrapped in an array)'],
  ],
  [
    'Llama python_tag, a nested object as JSON text',
    `<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo", "opts": "{\\"limit\\": \\"5\\"}"}}`,
    { city: 'Oslo', opts: { limit: 5 }, days: 1 },
    ['repaired /opts: "{\\"limit\\": \\"5\\"}" -> {"limit":"5"} (JSON text decoded)', 'repaired /opts/limit: "5" -> 5 (string to number)', 'applied default /days: 1'],
  ],
  [
    'OpenAI function with near-JSON arguments text',
    `{"function": {"name": "search", "arguments": "{'query': 'x', 'max_results': '10',}"}}`,
    { query: 'x', max_results: 10 },
    ['repaired /max_results: "10" -> 10 (string to number)'],
  ],
  [
    'nested near-JSON, an enum in another case, Python False',
    `<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "detailed": False, "units": 'Fahrenheit', "opts": {lang: 'en', limit: '3',},}}</tool_call>`,
    { city: 'Oslo', detailed: false, units: 'fahrenheit', opts: { lang: 'en', limit: 3 }, days: 1 },
    ['repaired /units: "Fahrenheit" -> "fahrenheit" (enum value corrected)', 'repaired /opts/limit: "3" -> 3 (string to number)', 'applied default /days: 1'],
  ],
];

describe.each([
  ['sequential', DispatchMode.SEQUENTIAL],
  ['parallel', DispatchMode.PARALLEL],
])('%s', (_name, mode) => {
  test.each(cases)('%s', async (_what, text, args, warnings) => {
    const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: ['get_weather', 'search'] });
    expect(parsed.calls).toHaveLength(1);
    expect(parsed.remainingText).toBe('');
    const reply = await d.dispatch.dispatch({ sessionId: `near-json-${mode}-${_what}`, mode, calls: asCalls(parsed.calls), offeredTools: ['get_weather', 'search'] });
    const result = reply.results[0]!;
    expect(result.toolCallId).toBe(parsed.calls[0]!.id);
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual(args);
    expect(result.warnings).toEqual(warnings);
  });

  test('two calls of one Mistral array, each repaired on its own', async () => {
    const text = `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo", "units": "Celsius"}}, {"name": "search", "arguments": {"query": "x", "max_results": "10"}}]`;
    const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: ['get_weather', 'search'] });
    const reply = await d.dispatch.dispatch({ sessionId: `near-json-${mode}-mistral`, mode, calls: asCalls(parsed.calls) });
    expect(reply.results.map((r) => [r.toolCallId, JSON.parse(r.output), r.warnings])).toEqual([
      [parsed.calls[0]!.id, { city: 'Oslo', units: 'celsius', days: 1 }, ['repaired /units: "Celsius" -> "celsius" (enum value corrected)', 'applied default /days: 1']],
      [parsed.calls[1]!.id, { query: 'x', max_results: 10 }, ['repaired /max_results: "10" -> 10 (string to number)']],
    ]);
  });
});
