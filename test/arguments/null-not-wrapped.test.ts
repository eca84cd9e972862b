import { repairArguments } from '../../src/arguments';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// `null` for an array field is "none", not a list holding one null: lenient repair wrapped it as
// a bare value (`"ids": null` became `"ids": [null]`), and where the items allow null (or say
// nothing of their type) the repaired call was valid and ran, acting on [null]. An optional
// null is dropped (before any wrapping); a required one now stays invalid, as for other types.

const schema = {
  type: 'object',
  properties: {
    ids: { type: 'array', items: { type: ['string', 'null'] } },
    rows: { type: 'array', items: { type: 'array' } },
    tags: { type: 'array' },
  },
  required: ['ids'],
};

test('a required array field sent as null is not wrapped into [null]', () => {
  expect(repairArguments({ ids: null }, schema)).toEqual({ value: { ids: null }, repairs: [], refused: [] });
});

test('a null item of an array of arrays is not wrapped either', () => {
  expect(repairArguments({ ids: [], rows: [[1], null] }, schema)).toEqual({ value: { ids: [], rows: [[1], null] }, repairs: [], refused: [] });
});

test('an optional array field sent as null is still dropped, and a bare value still wrapped', () => {
  const { value, repairs } = repairArguments({ ids: 'a', tags: null }, schema);
  expect(value).toEqual({ ids: ['a'] });
  expect(repairs).toEqual(['repaired /ids: "a" -> ["a"] (bare value wrapped in an array)', 'repaired /tags: null dropped (optional field)']);
});

describe('over the wire', () => {
  let tools: ToolServer;
  let d: TestDispatch;
  beforeAll(async () => {
    tools = await startToolServer({ '/delete': (_req, res) => void res.writeHead(200).end('deleted') });
    d = await startApp(`
tools:
  - name: delete_items
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"ids":{"type":"array"}},"required":["ids"]}'
    http: { url: "${tools.url}/delete" }
`);
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test('a required array sent as null is refused, and the tool never runs', async () => {
    const { results } = await d.dispatch.dispatch({ sessionId: 'null-array', calls: [{ id: 'c', name: 'delete_items', arguments: '{"ids":null}' }] });
    // Before: the tool ran with {"ids":[null]}, warned "repaired /ids: null -> [null]".
    expect(results[0]!.isError).toBe(true);
    expect(results[0]!.error?.message).toBe('invalid arguments: /ids: got null (null); must be array; expected {"type":"array"}; the tool was not executed');
    expect(tools.count()).toBe(0);
  });
});
