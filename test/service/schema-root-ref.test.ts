import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, type TestDispatch } from '../helpers/servers';

// A schema recursing to its own root (`"$ref": "#"`: a tree, a filter of and/or/not nodes) did not
// compile: "can't resolve reference # from id #", as the compiler's Ajv did not add the schema it
// compiled under its own base URI (addUsedSchema false, from when one Ajv compiled every tool's
// schema and their $ids could clash; each schema now has its own Ajv). Through RegisterTools and
// Dispatch with the echo tool.

let t: TestDispatch;
beforeAll(async () => {
  t = await startApp('tools: []\n');
});
afterAll(() => t.close());

const filter = {
  type: 'object',
  properties: {
    and: { type: 'array', items: { $ref: '#' } },
    not: { $ref: '#' },
    field: { type: 'string' },
    limit: { type: 'integer', default: 10 },
  },
  additionalProperties: false,
};

const call = async (name: string, args: unknown) => (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] })).results[0]!;

test('a schema whose $ref is its root registers, validates at every depth and fills defaults there', async () => {
  await t.registry.registerTools({ tools: [{ name: 'search', effect: Effect.READ_ONLY, inputSchema: JSON.stringify(filter), executor: { case: 'builtin', value: { name: 'echo' } } }] });
  const ok = await call('search', { and: [{ field: 'a' }, { not: { field: 'b' } }] });
  expect(ok.isError).toBe(false);
  expect(JSON.parse(ok.output)).toEqual({ and: [{ field: 'a', limit: 10 }, { not: { field: 'b', limit: 10 }, limit: 10 }], limit: 10 });
  const bad = await call('search', { and: [{ not: { field: 7 } }] });
  expect(bad.isError).toBe(true);
  expect(bad.error?.message).toContain('/and/0/not/field');
});

test('with an $id of its own, a schema refers to its root by that $id too', async () => {
  const schema = { ...filter, $id: 'https://tools.example.com/filter', properties: { ...filter.properties, or: { type: 'array', items: { $ref: 'https://tools.example.com/filter' } } } };
  await t.registry.registerTools({ tools: [{ name: 'search2', effect: Effect.READ_ONLY, inputSchema: JSON.stringify(schema), executor: { case: 'builtin', value: { name: 'echo' } } }] });
  expect((await call('search2', { or: [{ not: { field: 'x' } }] })).isError).toBe(false);
  expect((await call('search2', { or: [{ nope: 1 }] })).isError).toBe(true);
});
