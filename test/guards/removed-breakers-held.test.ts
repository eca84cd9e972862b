import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { HeldBreakers } from '../../src/guards';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import type { App } from '../../src/app';

// A removed tool's breaker kept the whole removed tool (spec, compiled schema) in memory: RemoveTool
// told the breakers while the tool was still registered, so the breaker stayed, with a check that
// held the tool, until the name was used again or 10,000 breakers evicted it; heap grew to out of
// memory. The full app over real gRPC, real HTTP tools: after RemoveTool no breaker of it is held.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: TestDispatch & { app: App };
beforeAll(async () => {
  tools = await startToolServer({
    '/down': (_req, res) => void res.writeHead(503).end('down'),
    '/up': (_req, res) => void res.writeHead(200).end('fine'),
    '/slow-down': (_req, res) => void setTimeout(() => res.writeHead(503).end('down'), 300),
  });
  d = await startApp('tools: []\n');
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const held = () => (d.app.deps.guards.breaker as unknown as HeldBreakers).size;
const http = (name: string, path: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', retry: { maxAttempts: 1 }, executor: { case: 'http' as const, value: { url: `${tools.url}${path}`, headers: {} } } });
let n = 0;
const call = async (name: string) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${++n}`, name, arguments: JSON.stringify({ n }) }] })).results[0]!;

test('tools called once and removed leave no breaker behind, failing or closed', async () => {
  expect(held()).toBe(0);
  // Each round checks that nothing is left: a few rounds show none accumulates.
  for (let i = 0; i < 5; i++) {
    await d.registry.registerTools({ tools: [http(`down_${i}`, '/down'), http(`up_${i}`, '/up')] });
    expect((await call(`down_${i}`)).error?.kind).toBe(ErrorKind.TOOL_ERROR);
    expect((await call(`up_${i}`)).output).toBe('fine');
    expect(held()).toBe(2);
    expect((await d.registry.removeTool({ name: `down_${i}` })).removed).toBe(true);
    expect((await d.registry.removeTool({ name: `up_${i}` })).removed).toBe(true);
    expect(held()).toBe(0);
  }
});

test('an open breaker goes at once with its removed tool: the name registered again starts closed', async () => {
  await d.registry.registerTools({ tools: [http('flaky', '/down')] });
  for (let i = 0; i < 5; i++) await call('flaky');
  expect((await call('flaky')).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(held()).toBe(1);
  await d.registry.removeTool({ name: 'flaky' });
  expect(held()).toBe(0);
  await d.registry.registerTools({ tools: [http('flaky', '/up')] });
  expect((await call('flaky')).output).toBe('fine');
});

test('a call still running when its tool is removed leaves no breaker behind as it ends', async () => {
  const before = held();
  await d.registry.registerTools({ tools: [http('leaving', '/slow-down')] });
  const running = call('leaving');
  await new Promise((r) => setTimeout(r, 100));
  expect(held()).toBe(before + 1);
  expect((await d.registry.removeTool({ name: 'leaving' })).removed).toBe(true);
  expect(held()).toBe(before);
  expect((await running).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  // Before: its outcome, recorded after the removal, made the removed tool a breaker again, held
  // (and listed by dispatch_breaker_state) until 10,000 breakers evicted it.
  expect(held()).toBe(before);
});
