import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in a deadline hunt: a call waiting for a concurrency slot waited up to the request's
// deadline itself, so its refusal came when the client had given up: the turn ended
// DEADLINE_EXCEEDED and the results of its other calls were lost. The wait now ends the deadline's
// slack before it (as a backoff's room does), and the soft refusal goes back with the turn.
// Real HTTP tools behind a real gRPC dispatch with a real RPC deadline.

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({
    // Past the 3 s deadline of the waiting turn (with a second to spare), so its wait never gets the slot.
    '/hold': json({ held: true }, 4_000),
    '/ok': json({ ok: true }),
  });
  d = await startApp(`
tools:
  - { name: capped, effect: read_only, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/hold" } }
  - { name: lookup, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/ok" } }
policies:
  - match: capped
    concurrency: { max_in_flight: 1, wait_ms: 10000 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test("a slot wait cut by the deadline is refused soon enough for the turn's other results to go back", async () => {
  // A turn holds the one slot 4 s; the next turn's 'y' waits for it within a 3 s deadline.
  const holder = d.dispatch.dispatch({ sessionId: 'slot-hold', calls: [{ id: 'h', name: 'capped', arguments: '{}' }] }, { deadlineMs: 20_000 });
  for (let i = 0; i < 100 && tools.count('/hold') === 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(tools.count('/hold')).toBe(1);
  const started = Date.now();
  const response = await d.dispatch.dispatch(
    {
      sessionId: 'slot-wait',
      calls: [
        { id: 'x', name: 'lookup', arguments: '{}' },
        { id: 'y', name: 'capped', arguments: '{"n":2}' },
      ],
    },
    { deadlineMs: 3_000 },
  );
  expect(Date.now() - started).toBeLessThan(3_000);
  const [x, y] = response.results;
  expect(x).toMatchObject({ toolCallId: 'x', isError: false, output: '{"ok":true}' });
  expect(y).toMatchObject({ toolCallId: 'y', isError: true });
  expect(y!.error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  expect(y!.error!.message).toMatch(/^tool "capped" stayed at its limit of 1 call running at once on this dispatch replica for \d+ ms; this call was not executed$/);
  expect(tools.count('/hold')).toBe(1);
  await expect(holder).resolves.toMatchObject({ results: [{ isError: false }] });
}, 15_000);
