import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { createBreakers, DEFAULT_BREAKER_SETTINGS } from '../../src/guards';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp, type MetricsApp } from '../telemetry/metrics-app';

// A removed tool's breaker goes with it. It stayed: the name registered again, with a healthy URL,
// was refused BREAKER_OPEN, and dispatch_breaker_state kept saying open. The full app over real
// gRPC, a real HTTP tool, its real /metrics; then the breakers' eviction, which took closed
// breakers only, so that half-open ones (a tool never called again) piled up past maxBreakers.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: MetricsApp;
beforeAll(async () => {
  tools = await startToolServer({
    '/down': (_req, res) => void res.writeHead(503).end('down'),
    '/up': (_req, res) => void res.writeHead(200).end('fine'),
  });
  d = await startMetricsApp('tools: []\n');
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const register = (path: string) =>
  d.registry.registerTools({ tools: [{ name: 'moved', effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', retry: { maxAttempts: 1 }, executor: { case: 'http', value: { url: `${tools.url}${path}`, headers: {} } } }] });
let calls = 0;
const call = async () => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${++calls}`, name: 'moved', arguments: JSON.stringify({ n: calls }) }] })).results[0]!;
const gauge = async () => (await d.scrape()).value('dispatch_breaker_state', { tenant: 'default', tool: 'moved' });

test('a tool removed and registered again starts with a closed breaker, and the gauge says so', async () => {
  await register('/down');
  for (let i = 0; i < 5; i++) expect((await call()).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await call()).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(await gauge()).toBe(2);
  expect((await d.registry.removeTool({ name: 'moved' })).removed).toBe(true);
  await register('/up');
  const result = await call();
  expect(result.isError).toBe(false);
  expect(result.output).toBe('fine');
  expect(tools.count('/up')).toBe(1);
  expect(await gauge()).toBe(0);
});

test('past maxBreakers a half-open breaker with no probe out is dropped, when no closed one is', async () => {
  const states: string[] = [];
  const breakers = createBreakers({ maxBreakers: 2, settingsFor: () => ({ ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 1, halfOpenAfterMs: 20 }), onState: (tool, state) => void states.push(`${tool} ${state}`) });
  try {
    const fail = (tool: string) => breakers.gate.record(tool, breakers.gate.tryAcquire(tool, 1000)!, { ok: false, counts: true, durationMs: 0 });
    fail('a');
    fail('b');
    await new Promise((r) => setTimeout(r, 60));
    expect([breakers.state('a'), breakers.state('b')]).toEqual(['half_open', 'half_open']);
    // b's probe is out: only a may go.
    breakers.gate.tryAcquire('b', 1000);
    breakers.gate.tryAcquire('c', 1000);
    expect([breakers.state('a'), breakers.state('b'), breakers.state('c')]).toEqual(['closed', 'half_open', 'closed']);
    expect(breakers.gate.isOpen('b')).toBe(true);
    expect(states).toEqual(['a open', 'b open', 'a half_open', 'b half_open', 'a closed']);
    // A removed tool's breaker is dropped whatever its state.
    breakers.forget('b');
    expect(breakers.gate.isOpen('b')).toBe(false);
    expect(states.at(-1)).toBe('b closed');
  } finally {
    breakers.close();
  }
});
