import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A Python agent author's probe: a side-effecting call made while an identical one still ran
// (another turn) was refused IN_PROGRESS `recoverable: false` with no retry_after_ms, and told to
// "wait for its result", which a model in another turn cannot do. A loop following the README
// (wait and call again only when recoverable) gave up on a call that, made again, is answered by
// the first one's record. Now IN_PROGRESS is recoverable, told to wait the tool's timeout.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/charge': json({ charged: 5 }, 600) });
  d = await startApp(`
tools:
  - { name: charge, effect: side_effect, timeout_ms: 3000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const charge = (id: string) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'charge', arguments: '{"order":"E1","amount":5}' }] });

test('an identical call still running: IN_PROGRESS, recoverable, retry_after_ms the tool timeout; the same call made again later is replayed, the tool run once', async () => {
  const first = charge('c1');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const [duplicate] = (await charge('c2')).results;
  expect(duplicate!.error).toMatchObject({ kind: ErrorKind.IN_PROGRESS, recoverable: true, retryAfterMs: 3000 });
  expect(JSON.parse(duplicate!.output)).toMatchObject({ kind: 'IN_PROGRESS', recoverable: true, retry_after_ms: 3000 });
  expect(duplicate!.error!.suggestion).toMatch(/made again after retry_after_ms returns that call's result, replayed/);
  expect((await first).results[0]!.isError).toBe(false);
  const [again] = (await charge('c3')).results;
  expect(again).toMatchObject({ isError: false, idempotentReplay: true });
  expect(tools.count('/charge')).toBe(1);
});
