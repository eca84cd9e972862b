import { status, type ServiceError } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// Draft 2019-09 schemas keep their meaning once upgraded to 2020-12. `$recursiveAnchor` /
// `$recursiveRef` (2020-12's `$dynamicAnchor` / `$dynamicRef` replaced them) were refused
// "schema is invalid: data/$recursiveAnchor must be string"; they now validate as 2019-09 says,
// and the one arrangement the validator cannot follow is refused saying where and what to write.
// The other differences (a list of `items` with `additionalItems`, `definitions` beside `$defs`,
// draft-07's `dependencies`, `unevaluatedProperties` and `unevaluatedItems`) are checked by calls.

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools: []\n');
});
afterAll(() => d.close());

const D2019 = 'https://json-schema.org/draft/2019-09/schema';

const spec = (name: string, schema: object) => ({
  name,
  effect: Effect.READ_ONLY,
  inputSchema: JSON.stringify(schema),
  executor: { case: 'builtin' as const, value: { name: 'echo' } },
});

async function outcomes(tool: string, schema: object, calls: readonly object[]): Promise<boolean[]> {
  await expect(d.registry.registerTools({ tools: [spec(tool, schema)] })).resolves.toMatchObject({ registered: 1 });
  const { results } = await d.dispatch.dispatch({ sessionId: 'drafts-2019', calls: calls.map((args, i) => ({ id: `c${i}`, name: tool, arguments: JSON.stringify(args) })) });
  return results.map((r) => !r.isError);
}

async function refusal(schema: object): Promise<string> {
  const error = await d.registry.registerTools({ tools: [spec('refused', schema)] }).catch((e: ServiceError) => e);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  return (error as ServiceError).details;
}

const tree = (extra: object = {}) => ({
  $schema: D2019,
  $recursiveAnchor: true,
  type: 'object',
  properties: { v: { type: 'number' }, kids: { type: 'array', items: { $recursiveRef: '#' } } },
  ...extra,
});

test('a 2019-09 tree with $recursiveAnchor at its root and $recursiveRef is registered and validates every level', async () => {
  const calls = [{ v: 1, kids: [{ v: 2, kids: [{ v: 3 }] }] }, { v: 1, kids: [{ v: 2, kids: [{ v: 'x' }] }] }, { v: 1, kids: [7] }];
  expect(await outcomes('tree', tree(), calls)).toEqual([true, false, false]);
  // ListTools gives the schema back as it was registered.
  const { tools } = await d.registry.listTools({});
  expect(JSON.parse(tools.find((t) => t.name === 'tree')!.inputSchema)).toEqual(tree());
});

test('$recursiveAnchor: false, or none, makes $recursiveRef a plain reference to its resource root', async () => {
  const calls = [{ v: 1, kids: [{ v: 2 }] }, { v: 1, kids: [{ v: 'x' }] }];
  expect(await outcomes('tree_false', tree({ $recursiveAnchor: false }), calls)).toEqual([true, false]);
  // Beside a $ref: both apply.
  const both = { $schema: D2019, $defs: { small: { maxProperties: 1 } }, type: 'object', properties: { v: { type: 'number' }, k: { $ref: '#/$defs/small', $recursiveRef: '#' } } };
  expect(await outcomes('beside_ref', both, [{ v: 1, k: { v: 2 } }, { v: 1, k: { v: 2, k: {} } }, { v: 1, k: { v: 'x' } }])).toEqual([true, false, false]);
});

test('the extension pattern: an anchored root extending an anchored tree makes every level strict (unevaluatedProperties)', async () => {
  const strictTree = {
    $schema: D2019,
    $id: 'https://example.com/strict-tree',
    $recursiveAnchor: true,
    $ref: 'tree',
    unevaluatedProperties: false,
    $defs: {
      tree: { $id: 'https://example.com/tree', $recursiveAnchor: true, type: 'object', properties: { data: true, children: { type: 'array', items: { $recursiveRef: '#' } } } },
    },
  };
  expect(await outcomes('strict_tree', strictTree, [{ children: [{ data: 1 }] }, { children: [{ daat: 1 }] }, { daat: 1 }])).toEqual([true, false, false]);
  // The root not anchored: the tree's own $recursiveRef reaches the tree, not the root.
  const loose = { ...strictTree, $recursiveAnchor: false };
  expect(await outcomes('loose_tree', loose, [{ children: [{ daat: 1 }] }, { daat: 1 }])).toEqual([true, false]);
});

const node = (key: string, type: string) => ({ $id: `https://example.com/${key}`, $recursiveAnchor: true, type: 'object', properties: { [key]: { type }, kids: { type: 'array', items: { $recursiveRef: '#' } } } });

test('two anchored trees side by side under an anchored root each recurse to the root', async () => {
  const schema = { $schema: D2019, $id: 'https://example.com/two-trees', $recursiveAnchor: true, type: 'object', properties: { a: { $ref: 'https://example.com/x' }, b: { $ref: 'https://example.com/y' } }, $defs: { x: node('x', 'number'), y: node('y', 'string') } };
  // Each kid is validated against the root: its own `a`/`b`, not x or y.
  const calls = [{ a: { x: 1, kids: [{ a: { x: 2 } }] }, b: { y: 's', kids: [{ b: { y: 't' } }] } }, { a: { x: 1, kids: [{ a: { x: 's' } }] } }, { a: { x: 1, kids: [{ x: 's' }] } }];
  expect(await outcomes('two_trees', schema, calls)).toEqual([true, false, true]);
});

test.each([
  [
    { $schema: D2019, type: 'object', properties: { a: { $recursiveAnchor: true, type: 'object' } } },
    'input_schema declares draft 2019-09 and has $recursiveAnchor: true at #/properties/a, which is not the root of a schema resource (the document\'s or a subschema with its own $id), the only place 2019-09 reads it: move it there, or remove it',
  ],
  [
    { $schema: D2019, type: 'object', properties: { a: { $recursiveRef: '#/$defs/x' } }, $defs: { x: {} } },
    'input_schema declares draft 2019-09 and has $recursiveRef "#/$defs/x" at #/properties/a: 2019-09 defines it only as "#"; for a reference that does not depend on the path taken, write $ref',
  ],
  [
    { $schema: D2019, $recursiveAnchor: true, properties: { a: { $ref: 'https://example.com/x' } }, $defs: { x: node('x', 'number') } },
    'input_schema declares draft 2019-09 and has $recursiveRef at #/$defs/x/properties/kids/items in an anchored schema resource, which reaches the document\'s root (anchored too), and the root has no absolute $id to reference it by: give the root an $id such as "https://example.com/my-tool"',
  ],
  [
    { $schema: 'http://json-schema.org/draft-07/schema#', properties: { a: { $recursiveRef: '#' } } },
    'input_schema declares draft-07, which has no $recursiveRef (2019-09 added it), and has one at #/properties/a: declare https://json-schema.org/draft/2019-09/schema, or write $ref',
  ],
  [
    { $schema: D2019, $recursiveAnchor: 'yes' },
    'input_schema declares draft 2019-09 and has $recursiveAnchor "yes" at #: it is true or false',
  ],
  [
    {
      $schema: D2019,
      properties: { a: { $ref: 'https://example.com/x' }, b: { $ref: 'https://example.com/y' } },
      $defs: { x: { $id: 'https://example.com/x', $recursiveAnchor: true, items: { $recursiveRef: '#' } }, y: { $id: 'https://example.com/y', $recursiveAnchor: true, items: { $recursiveRef: '#' } } },
    },
    'input_schema declares draft 2019-09 and has $recursiveAnchor: true in 2 schema resources (#/$defs/x, #/$defs/y) but not at its root: which one a $recursiveRef reaches then depends on the path validation took, which dispatch\'s validator does not follow. Put $recursiveAnchor: true at the root too (every $recursiveRef in an anchored resource then reaches the root), or write $ref to the resource meant instead of $recursiveRef',
  ],
])('a $recursiveAnchor or $recursiveRef that cannot be kept faithfully is refused, saying where and what to write (%#)', async (schema, message) => {
  expect(await refusal(schema)).toContain(message);
});

test("2019-09's list of items with additionalItems is a tuple; additionalItems beside one items schema is ignored", async () => {
  const schema = {
    $schema: D2019,
    type: 'object',
    properties: {
      closed: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
      rest: { type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'boolean' } },
      open: { type: 'array', items: [{ type: 'string' }] },
      single: { type: 'array', items: { type: 'string' }, additionalItems: false },
    },
  };
  const calls = [{ closed: ['a', 1] }, { closed: ['a', 1, 2] }, { rest: ['a', true, false] }, { rest: ['a', 1] }, { open: ['a', 1, {}] }, { open: [1] }, { single: ['a', 'b', 'c'] }];
  expect(await outcomes('tuples', schema, calls)).toEqual([true, false, true, false, true, false, true]);
});

test('$defs and definitions both resolve; dependentRequired, dependentSchemas and draft-07 dependencies are enforced', async () => {
  const schema = {
    $schema: D2019,
    type: 'object',
    properties: { a: { $ref: '#/$defs/s' }, b: { $ref: '#/definitions/n' }, c: {}, d: {} },
    $defs: { s: { type: 'string' } },
    definitions: { n: { type: 'number' } },
    dependentRequired: { c: ['a'] },
    dependentSchemas: { d: { required: ['b'] } },
  };
  expect(await outcomes('defs_deps', schema, [{ a: 's', b: 1 }, { a: 1 }, { b: 's' }, { c: 1 }, { c: 1, a: 's' }, { d: 1 }, { d: 1, b: 2 }])).toEqual([true, false, false, false, true, false, true]);
  const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', dependencies: { c: ['a'], d: { required: ['b'] } } };
  expect(await outcomes('deps7', draft7, [{ c: 1 }, { c: 1, a: 1 }, { d: 1 }, { d: 1, b: 1 }])).toEqual([false, true, false, true]);
});

test('unevaluatedProperties sees through allOf and anyOf; unevaluatedItems counts a list of items and additionalItems', async () => {
  const props = {
    $schema: D2019,
    type: 'object',
    allOf: [{ properties: { a: { type: 'string' } } }],
    anyOf: [{ properties: { kind: { const: 'x' }, x: true }, required: ['kind'] }, { properties: { kind: { const: 'y' } } }],
    unevaluatedProperties: false,
  };
  expect(await outcomes('uneval_props', props, [{ a: 's' }, { kind: 'x', x: 1 }, { kind: 'y', x: 1 }, { b: 1 }])).toEqual([true, true, false, false]);
  const items = { $schema: D2019, type: 'object', properties: { t: { items: [{ type: 'string' }], unevaluatedItems: false }, r: { items: [{ type: 'string' }], additionalItems: { type: 'number' }, unevaluatedItems: false } } };
  expect(await outcomes('uneval_items', items, [{ t: ['a'] }, { t: ['a', 'b'] }, { r: ['a', 1, 2] }, { r: ['a', 1, 'b'] }])).toEqual([true, false, true, false]);
});

test("draft-07's $id with a fragment names a subschema, as 2019-09's $anchor does", async () => {
  const d7 = 'http://json-schema.org/draft-07/schema#';
  const bare = { $schema: d7, definitions: { s: { $id: '#str', type: 'string' } }, properties: { x: { $ref: '#str' } } };
  expect(await outcomes('fragment_id', bare, [{ x: 's' }, { x: 1 }])).toEqual([true, false]);
  const full = { $schema: d7, $id: 'https://example.com/root.json', definitions: { s: { $id: 'https://example.com/root.json#str', type: 'string' }, n: { $id: 'https://example.com/other.json#num', type: 'number' } }, properties: { x: { $ref: '#str' }, y: { $ref: 'other.json#num' } } };
  expect(await outcomes('full_id', full, [{ x: 's', y: 1 }, { x: 1 }, { y: 's' }])).toEqual([true, false, false]);
});
