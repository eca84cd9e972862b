import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// The memo cache keys a read-only call by every argument, whatever the tool's key_fields (which
// say what makes two side effects the same): page 2 of a search is not page 1's memoized answer.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  tools = await startToolServer({ '/search': (req, res) => void res.writeHead(200).end(JSON.stringify(req.body.arguments)) });
  d = await startApp(`
tools:
  - name: search
    effect: read_only
    idempotency: { key_fields: ["/query"] }
    input_schema: '{"type":"object","properties":{"query":{"type":"string"},"page":{"type":"integer"}}}'
    http: { url: "${tools.url}/search" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const search = (args: object) => d.dispatch.dispatch({ sessionId: 'memo-key', calls: [{ id: 'c', name: 'search', arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

test('two reads that differ outside key_fields are two reads; the same read again is memoized', async () => {
  const first = await search({ query: 'rust', page: 1 });
  const second = await search({ query: 'rust', page: 2 });
  expect([first.cached, second.cached]).toEqual([false, false]);
  expect(JSON.parse(second.output)).toEqual({ query: 'rust', page: 2 });
  const again = await search({ page: 2, query: 'rust' });
  expect(again.cached).toBe(true);
  expect(JSON.parse(again.output)).toEqual({ query: 'rust', page: 2 });
  expect(tools.count('/search')).toBe(2);
});
