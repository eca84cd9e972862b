import { status, type ServiceError } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A schema declaring an older JSON Schema draft (zod-to-json-schema's draft-07, so the MCP
// TypeScript SDK's tools; older tooling's draft-04) is upgraded to 2020-12 and registered; before,
// every $schema but 2020-12's was refused "no schema with key or ref". The upgrade keeps what the
// older draft meant: a list of `items` is a tuple, `dependencies` is enforced, draft-04's boolean
// exclusiveMinimum excludes. A $schema naming no draft is refused, saying which ones are known.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

const spec = (name: string, schema: object | string) => ({
  name,
  effect: Effect.READ_ONLY,
  inputSchema: typeof schema === 'string' ? schema : JSON.stringify(schema),
  executor: { case: 'builtin' as const, value: { name: 'echo' } },
});

async function outcome(tool: string, args: object): Promise<string> {
  const { results } = await d.dispatch.dispatch({ sessionId: 'drafts', calls: [{ id: 'c', name: tool, arguments: JSON.stringify(args) }] });
  const result = results[0]!;
  return result.isError ? `error: ${(JSON.parse(result.output) as { message: string }).message}` : 'ok';
}

test('a draft-07 schema as zod-to-json-schema writes it is registered, with draft-07 meaning', async () => {
  const zod = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      to: { type: 'string', format: 'email' },
      pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
      cc: { type: 'string' },
    },
    required: ['to'],
    dependencies: { cc: ['pair'] },
    additionalProperties: false,
  };
  await expect(d.registry.registerTools({ tools: [spec('zod_tool', zod)] })).resolves.toMatchObject({ registered: 1 });
  expect(await outcome('zod_tool', { to: 'a@b.co', pair: ['x', 1] })).toBe('ok');
  expect(await outcome('zod_tool', { to: 'a@b.co', pair: ['x', 1, true] })).toMatch(/^error: .*pair/);
  expect(await outcome('zod_tool', { to: 'a@b.co', pair: [1, 'x'] })).toMatch(/^error: .*pair\/0/);
  expect(await outcome('zod_tool', { to: 'a@b.co', cc: 'c@d.co' })).toMatch(/^error: .*pair/);
  expect(await outcome('zod_tool', { to: 'not an address' })).toMatch(/^error: .*to/);
  // ListTools gives the schema back as it was registered.
  const { tools } = await d.registry.listTools({});
  expect(JSON.parse(tools.find((t) => t.name === 'zod_tool')!.inputSchema)).toEqual(zod);
});

test("draft-07's numeric exclusiveMinimum and exclusiveMaximum (zod's .positive()) are kept, also in a property so named; a __proto__ string is no key", async () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      amount: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1000 },
      exclusiveMinimum: { type: 'string', enum: ['__proto__', 'x'] },
    },
  };
  await expect(d.registry.registerTools({ tools: [spec('positive', schema)] })).resolves.toMatchObject({ registered: 1 });
  expect(await outcome('positive', { amount: 5, exclusiveMinimum: '__proto__' })).toBe('ok');
  expect(await outcome('positive', { amount: 0 })).toMatch(/^error: .*amount/);
  expect(await outcome('positive', { amount: -5 })).toMatch(/^error: .*amount/);
  expect(await outcome('positive', { amount: 1000 })).toMatch(/^error: .*amount/);
  expect(await outcome('positive', { amount: 1, exclusiveMinimum: 'y' })).toMatch(/^error: .*exclusiveMinimum/);
});

test("draft-04's boolean exclusiveMinimum excludes; 2020-12's URI with '#' and 2019-09's are accepted", async () => {
  const draft4 = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { n: { type: 'number', minimum: 1, exclusiveMinimum: true } } };
  const tools = [
    spec('d4', draft4),
    spec('d2020', { $schema: 'https://json-schema.org/draft/2020-12/schema#', type: 'object' }),
    spec('d2019', { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { t: { type: 'array', items: [{ type: 'string' }] } } }),
  ];
  await expect(d.registry.registerTools({ tools })).resolves.toMatchObject({ registered: 3 });
  expect(await outcome('d4', { n: 2 })).toBe('ok');
  expect(await outcome('d4', { n: 1 })).toMatch(/^error: .*n/);
  expect(await outcome('d2019', { t: [5] })).toMatch(/^error: .*t\/0/);
});

test.each([
  [{ $schema: 'https://example.com/my-meta', type: 'object' }, 'input_schema\'s $schema "https://example.com/my-meta" names no JSON Schema draft dispatch knows: use https://json-schema.org/draft/2020-12/schema (draft-04, -06, -07 and 2019-09 are upgraded to it), or leave $schema out'],
  [{ $schema: 7, type: 'object' }, "input_schema's $schema is not a string and names no JSON Schema draft dispatch knows"],
  ['{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"__proto__":{"type":"string"}}}}', 'input_schema declares draft-07, which dispatch upgrades to draft 2020-12, and has a "__proto__" key'],
  ['{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"\\u005f_proto__":["must"]}}', 'input_schema declares draft-07, which dispatch upgrades to draft 2020-12, and has a "__proto__" key'],
])('a $schema dispatch cannot read is refused, saying why (%#)', async (schema, message) => {
  const error = await d.registry.registerTools({ tools: [spec('bad', schema)] }).catch((e: ServiceError) => e);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect((error as ServiceError).details).toContain(message);
});
