import { parseToolCalls, textParametersOf, type TextParameterLookup, type TextParameters } from '../../src/parse';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';

// GLM and Qwen3-Coder write a value bare between tags, so `12345` was read as the number 12345
// even for a string parameter (a zip code, an id, a title "2024"), and Dispatch then refused the
// call INVALID_ARGUMENTS: "got 12345 (number); must be string", which the model cannot mend (it
// wrote the right text). With the tool's schema known, a string parameter keeps its text, as
// vLLM's qwen3_coder and glm4_moe parsers keep it.

/** A GLM-4.5 call as its chat template writes it: the name, then each key and value on a line. */
function glmCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>\n`).join('');
  return `<tool_call>${name}\n${body}</tool_call>`;
}

/** A Qwen3-Coder call as its chat template writes it, each value on lines of its own. */
function qwenCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<parameter=${key}>\n${value}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${name}>\n${body}</function>\n</tool_call>`;
}

/** A MiniMax-M2 call as its chat template writes it, in a block of its own. */
function miniMaxCall(name: string, args: Record<string, string>): string {
  const body = Object.entries(args).map(([key, value]) => `<parameter name="${key}">${value}</parameter>\n`).join('');
  return `<minimax:tool_call>\n<invoke name="${name}">\n${body}</invoke>\n</minimax:tool_call>`;
}

const ADDRESS_SCHEMA = {
  type: 'object',
  properties: {
    zip: { type: 'string' },
    title: { type: ['string'] },
    note: { type: ['null', 'string'] },
    count: { type: 'integer' },
    either: { type: ['string', 'integer'] },
    ref: { $ref: '#/$defs/text' },
  },
  $defs: { text: { type: 'string' } },
};
const TOOLS: Record<string, TextParameters> = { lookup_address: textParametersOf(ADDRESS_SCHEMA) };
const lookup: TextParameterLookup = (tool) => TOOLS[tool];

const argumentsOf = (text: string, textParameters?: TextParameterLookup): unknown[] =>
  parseToolCalls(text, undefined, { textParameters }).calls.map((call) => JSON.parse(call.arguments) as unknown);

const DIALECTS = [
  ['GLM', glmCall],
  ['Qwen3-Coder', qwenCall],
  ['MiniMax-M2', miniMaxCall],
] as const;

describe.each(DIALECTS)("%s values read by the tool's schema", (_, call) => {
  const VALUES = { zip: '12345', title: 'true', note: 'null', count: '12345', either: '7', ref: '8' };

  test('a string parameter keeps its text ("12345", "true", "null"); other types are read as JSON', () => {
    const text = call('lookup_address', VALUES) + call('lookup_address', { zip: 'null', title: '{"a": 1}', note: 'none', count: '3' });
    expect(argumentsOf(text, lookup)).toEqual([
      { zip: '12345', title: 'true', note: null, count: 12345, either: 7, ref: 8 },
      { zip: 'null', title: '{"a": 1}', note: 'none', count: 3 },
    ]);
  });

  test('an unknown tool, and a parse with no lookup, read values as before', () => {
    const unknown = call('other_tool', VALUES);
    expect(argumentsOf(unknown, lookup)).toEqual(argumentsOf(unknown));
    expect(argumentsOf(unknown, lookup)).toEqual([{ zip: 12345, title: true, note: null, count: 12345, either: 7, ref: 8 }]);
    expect(argumentsOf(call('lookup_address', VALUES))).toEqual([{ zip: 12345, title: true, note: null, count: 12345, either: 7, ref: 8 }]);
  });
});

test('a text value loses one line end each side (LF or CRLF), as any value does, and keeps the rest', () => {
  const glm = '<tool_call>lookup_address<arg_key>zip</arg_key><arg_value>\n 02134 \n</arg_value><arg_key>title</arg_key><arg_value>\r\n\r\n2024\r\n</arg_value></tool_call>';
  const qwen = '<function=lookup_address><parameter=zip>\n 02134 \n</parameter><parameter=title>\r\n\r\n2024\r\n</parameter></function>';
  for (const text of [glm, qwen]) expect(argumentsOf(text, lookup)).toEqual([{ zip: ' 02134 ', title: '\r\n2024' }]);
});

test('the lookup is asked once per distinct tool name in a parse, and not for calls with no arguments', () => {
  const asked: string[] = [];
  const counting: TextParameterLookup = (tool) => (asked.push(tool), lookup(tool));
  const text = [1, 2, 3].map((n) => glmCall('lookup_address', { zip: `${n}0000` })).join('') + qwenCall('lookup_address', { zip: '5' }) + glmCall('other', { a: '1' }) + '<tool_call>bare</tool_call>';
  expect(argumentsOf(text, counting)).toEqual([{ zip: '10000' }, { zip: '20000' }, { zip: '30000' }, { zip: '5' }, { a: 1 }, {}]);
  expect(asked).toEqual(['lookup_address', 'other']);
});

test('DSML and JSON dialects are not changed by the lookup', () => {
  const dsml = '<｜DSML｜invoke name="lookup_address">\n<｜DSML｜parameter name="zip" string="false">12345</｜DSML｜parameter>\n</｜DSML｜invoke>';
  expect(argumentsOf(dsml, lookup)).toEqual([{ zip: 12345 }]);
  expect(argumentsOf('<tool_call>{"name": "lookup_address", "arguments": {"zip": 12345}}</tool_call>', lookup)).toEqual([{ zip: 12345 }]);
});

test('textParametersOf reads only direct top-level string types', () => {
  expect(textParametersOf(ADDRESS_SCHEMA)).toEqual(new Map([['zip', 'text'], ['title', 'text'], ['note', 'text_or_null']]));
  for (const schema of [undefined, null, 'x', [], {}, { properties: [] }, { $ref: '#/$defs/a', $defs: { a: { properties: { zip: { type: 'string' } } } } }, { properties: { a: true, b: { type: ['null'] }, c: { type: [] }, d: { anyOf: [{ type: 'string' }] } } }]) {
    expect([schema, textParametersOf(schema).size]).toEqual([schema, 0]);
  }
  // A `__proto__` key of a parsed schema is a property like any other.
  expect(textParametersOf(JSON.parse('{"properties":{"__proto__":{"type":"string"}}}'))).toEqual(new Map([['__proto__', 'text']]));
});

describe('over the wire: ParseToolCalls, then Dispatch', () => {
  let tools: ToolServer;
  let d: TestDispatch;

  beforeAll(async () => {
    tools = await startToolServer({ '/geocode': json({ ok: true }) });
    d = await startDispatch(`
tools:
  - name: geocode
    effect: read_only
    input_schema: '{"type":"object","properties":{"zip":{"type":"string"},"limit":{"type":"integer"}},"required":["zip"],"additionalProperties":false}'
    http: { url: "${tools.url}/geocode" }
`);
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test.each(DIALECTS)('%s: the tool receives the zip codes as the text the model wrote', async (_, call) => {
    const before = tools.received.length;
    const text = `Looking both up.\n${call('geocode', { zip: '02134' })}\n${call('geocode', { zip: '12345', limit: '3' })}`;
    const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: ['geocode'] });
    const calls = parsed.calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
    const reply = await d.dispatch.dispatch({ sessionId: `zip-${call.name}`, calls, offeredTools: ['geocode'] });
    expect({
      parsed: calls.map((c) => c.arguments),
      results: reply.results.map((r) => [r.isError, r.output]),
      received: tools.received.slice(before).map((r) => r.body.arguments),
    }).toEqual({
      parsed: ['{"zip":"02134"}', '{"zip":"12345","limit":3}'],
      results: [
        [false, '{"ok":true}'],
        [false, '{"ok":true}'],
      ],
      received: [{ zip: '02134' }, { zip: '12345', limit: 3 }],
    });
  });
});

describe('with two tenants holding a tool of the same name', () => {
  const ACME: TestToken = { token: 'tok-acme-5d4c3b2a1f0e', tenant: 'acme', scopes: ['dispatch', 'admin'] };
  const GLOBEX: TestToken = { token: 'tok-globex-9a8b7c6d5e4f', tenant: 'globex', scopes: ['dispatch', 'admin'] };
  const INITECH: TestToken = { token: 'tok-initech-0a1b2c3d4e5f', tenant: 'initech', scopes: ['dispatch', 'admin'] };
  let app: AuthApp;

  const register = (token: TestToken, type: string) =>
    app.registry.registerTools(
      { tools: [{ name: 'find_order', inputSchema: JSON.stringify({ type: 'object', properties: { id: { type } }, required: ['id'] }), executor: { case: 'builtin', value: { name: 'echo' } } }] },
      bearer(token.token),
    );

  beforeAll(async () => {
    app = await startAuthApp(`tools: []\n${authYaml([ACME, GLOBEX, INITECH])}`);
    await register(ACME, 'string');
    await register(GLOBEX, 'integer');
  });
  afterAll(() => app.close());

  test("each tenant's values are read by its own tool's schema, never another tenant's", async () => {
    const text = glmCall('find_order', { id: '12345' });
    const parse = async (token: TestToken) => (await app.dispatch.parseToolCalls({ text }, bearer(token.token))).calls.map((c) => c.arguments);
    expect(await parse(ACME)).toEqual(['{"id":"12345"}']);
    expect(await parse(GLOBEX)).toEqual(['{"id":12345}']);
    // A tenant with no such tool reads the value as before, though acme's tool asks for text.
    expect(await parse(INITECH)).toEqual(['{"id":12345}']);
    // And each tenant's Dispatch takes what its parse gave.
    for (const token of [ACME, GLOBEX]) {
      const calls = (await app.dispatch.parseToolCalls({ text }, bearer(token.token))).calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }));
      const reply = await app.dispatch.dispatch({ sessionId: `orders-${token.tenant}`, calls }, bearer(token.token));
      expect([token.tenant, reply.results.map((r) => [r.isError, r.output])]).toEqual([token.tenant, [[false, calls[0]!.arguments]]]);
    }
  });
});
