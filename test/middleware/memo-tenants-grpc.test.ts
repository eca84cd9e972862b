import { createHash } from 'node:crypto';
import { DispatchMode } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in a hunt: tenant A's slow read of a doc began, A wrote the doc, and meanwhile tenant B made
// 10,001 side-effecting calls on its own resources: the memo cache forgot A's write (its resource
// generations were one LRU of 10,000 over all tenants), so A's slow read, from before its own
// write, was cached and served to A's next read for memoize_ttl_seconds.

const token = (tenant: string, secret: string) =>
  `    - { tenant: ${tenant}, scopes: [dispatch], sha256: ${createHash('sha256').update(secret).digest('hex')} }\n`;
const as = (secret: string) => ({ metadata: { authorization: `Bearer ${secret}` }, deadlineMs: 60_000 });

let tools: ToolServer;
let d: TestDispatch;
let version = 0;
let release!: () => void;
const slow = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  let reads = 0;
  tools = await startToolServer({
    '/get': (_req, res) => {
      const seen = version;
      // The first read is the slow one: it answers what it saw once released.
      if (++reads === 1) void slow.then(() => res.writeHead(200).end(JSON.stringify({ version: seen })));
      else res.writeHead(200).end(JSON.stringify({ version: seen }));
    },
    '/put': (_req, res) => void res.writeHead(200).end(JSON.stringify({ version: ++version })),
  });
  d = await startApp(`
auth:
  tokens:
${token('team-a', 'tok-a')}${token('team-b', 'tok-b')}tools:
  - { name: get_doc, effect: read_only, resource_key: /doc, memoize_ttl_seconds: 60, input_schema: '{"type":"object"}', http: { url: "${tools.url}/get" } }
  - { name: put_doc, effect: side_effect, resource_key: /doc, input_schema: '{"type":"object"}', http: { url: "${tools.url}/put" } }
  - { name: b_write, effect: side_effect, concurrency_safe: true, resource_key: /k, input_schema: '{"type":"object"}', builtin: { name: echo } }
`);
});
afterAll(async () => {
  release();
  await d?.close();
  await tools?.close();
});

test("A's read that overlapped its own write is not served after B's 10,001 writes on its own resources", async () => {
  const get = (id: string) => d.dispatch.dispatch({ sessionId: 'a', calls: [{ id, name: 'get_doc', arguments: '{"doc":"d"}' }] }, as('tok-a'));
  const first = get('g1');
  for (let i = 0; i < 50 && tools.count('/get') === 0; i++) await new Promise((r) => setTimeout(r, 20));
  const put = await d.dispatch.dispatch({ sessionId: 'a', calls: [{ id: 'p', name: 'put_doc', arguments: '{"doc":"d"}' }] }, as('tok-a'));
  expect(put.results[0]!.output).toBe('{"version":1}');
  const turns = [];
  for (let base = 0; base < 10_001; base += 128) {
    const calls = [];
    for (let j = base; j < Math.min(base + 128, 10_001); j++) calls.push({ id: `w${j}`, name: 'b_write', arguments: JSON.stringify({ k: `r${j}` }) });
    turns.push(d.dispatch.dispatch({ sessionId: `b${base}`, mode: DispatchMode.PARALLEL, calls }, as('tok-b')));
    if (turns.length === 8) await Promise.all(turns.splice(0));
  }
  await Promise.all(turns);
  release();
  expect((await first).results[0]!.output).toBe('{"version":0}');
  const again = (await get('g2')).results[0]!;
  expect([again.output, again.cached]).toEqual(['{"version":1}', false]);
}, 60_000);
