import { repairArguments } from '../../src/arguments';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Schema generators name each nested model and reference it: pydantic writes
// `"filter": {"$ref": "#/$defs/Filter"}`, zod-to-json-schema `"#/definitions/Filter"` (upgraded to
// $defs) or a pointer to the first use. Lenient repair read only the schema written in place, so a
// field of a referenced model was never repaired: `"limit": "5"` was fixed at the top level and
// refused one level down, for the same model written inline. A `$ref` that is all a subschema says
// of the value is followed now; one beside its own `type`, `properties`, `items` or `enum` is not.

const schema = {
  type: 'object',
  properties: {
    filter: { $ref: '#/$defs/Filter', description: 'what to match' },
    again: { $ref: '#/properties/filter' },
    mode: { $ref: '#/$defs/Mode' },
    both: { $ref: '#/$defs/Filter', type: 'object', properties: { limit: { type: 'string' } } },
  },
  $defs: {
    Filter: {
      type: 'object',
      properties: { limit: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, note: { type: 'string' } },
    },
    Mode: { type: 'string', enum: ['fast', 'thorough'] },
  },
};

test('a field of a referenced model is repaired as one written in place', () => {
  const { value, repairs } = repairArguments({ filter: { limit: '5', tags: 'red', note: null } }, schema);
  expect(value).toEqual({ filter: { limit: 5, tags: ['red'] } });
  expect(repairs).toEqual(['repaired /filter/limit: "5" -> 5 (string to number)', 'repaired /filter/tags: "red" -> ["red"] (bare value wrapped in an array)', 'repaired /filter/note: null dropped (optional field)']);
});

test('a reference to a reference, an enum and JSON text of a referenced model are followed too', () => {
  const { value } = repairArguments({ again: '{"limit":"2"}', mode: 'FAST' }, schema);
  expect(value).toEqual({ again: { limit: 2 }, mode: 'fast' });
});

test('a $ref beside a schema of its own is not followed as the whole schema: both apply, and a property both declare is not repaired', () => {
  // In place, limit is text; in the $ref's Filter an integer: no value fits both, so neither
  // repair is made (before, 5 was repaired to "5", which Filter then refused). Filter's own
  // properties are repaired as its (see repair-all-of.test.ts).
  expect(repairArguments({ both: { limit: 5 } }, schema)).toEqual({ value: { both: { limit: 5 } }, repairs: [], refused: [] });
  expect(repairArguments({ both: { tags: 'red' } }, schema)).toEqual({ value: { both: { tags: ['red'] } }, repairs: ['repaired /both/tags: "red" -> ["red"] (bare value wrapped in an array)'], refused: [] });
});

describe('over the wire', () => {
  let tools: ToolServer;
  let d: TestDispatch;
  beforeAll(async () => {
    tools = await startToolServer({ '/search': (_req, res) => void res.writeHead(200).end('found') });
    const filter = { type: 'object', properties: { limit: { type: 'integer' }, sort: { type: 'string', default: 'asc' } } };
    const input = JSON.stringify({ type: 'object', properties: { query: { type: 'string' }, filter: { $ref: '#/$defs/Filter' } }, required: ['query'], $defs: { Filter: filter } });
    d = await startApp(`
tools:
  - name: search
    effect: read_only
    lenient_arguments: true
    input_schema: '${input}'
    http: { url: "${tools.url}/search" }
`);
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test('a pydantic-style nested model with a number sent as text reaches the tool repaired, its defaults named', async () => {
    const { results } = await d.dispatch.dispatch({ sessionId: 'refs', calls: [{ id: 'c', name: 'search', arguments: '{"query":"q","filter":{"limit":"5"}}' }] });
    // Before: INVALID_ARGUMENTS "/filter/limit: got "5" (string); must be integer".
    expect([results[0]!.isError, results[0]!.output]).toEqual([false, 'found']);
    expect(results[0]!.warnings).toEqual(['repaired /filter/limit: "5" -> 5 (string to number)', 'applied default /filter/sort: "asc"']);
    expect(tools.received.map((r) => r.body.arguments)).toEqual([{ query: 'q', filter: { limit: 5, sort: 'asc' } }]);
  });
});
