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

// retry_after_ms was the whole tool timeout; it is a tenth of it, at least 1 s (an agent probe's
// loop slept 10 s for a call that ended 1.5 s later).
test('an identical call still running: IN_PROGRESS, recoverable, retry_after_ms a tenth of the tool timeout (at least 1 s); the same call made again later is replayed, the tool run once', async () => {
  const first = charge('c1');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const [duplicate] = (await charge('c2')).results;
  expect(duplicate!.error).toMatchObject({ kind: ErrorKind.IN_PROGRESS, recoverable: true, retryAfterMs: 1000 });
  expect(JSON.parse(duplicate!.output)).toMatchObject({ kind: 'IN_PROGRESS', recoverable: true, retry_after_ms: 1000 });
  expect(duplicate!.error!.suggestion).toMatch(/^An identical call \(from another turn\) is still running; this one did nothing. Call it again after retry_after_ms: once that call has ended \(within the tool's timeout, 3 s\), the same call returns its result, replayed, and until then gets IN_PROGRESS again/);
  expect((await first).results[0]!.isError).toBe(false);
  const [again] = (await charge('c3')).results;
  expect(again).toMatchObject({ isError: false, idempotentReplay: true });
  expect(tools.count('/charge')).toBe(1);
});
