import * as grpc from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, maxInFlight, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// A Python agent author's probe: a side-effecting call whose client's deadline passed while the
// tool ran had its request cut off by dispatch; its record said UNKNOWN, so the client's retry got
// OUTCOME_UNKNOWN for the record's whole TTL (an hour by default), though the tool had finished
// (it logged a broken pipe answering). Now such an attempt, its request delivered, runs to its
// end (or its own timeout): the RPC still ends DEADLINE_EXCEEDED at the deadline, the same call
// made again gets IN_PROGRESS meanwhile, then the tool's answer, replayed. A client's cancel still
// cuts the request off (OUTCOME_UNKNOWN). Real HTTP tools; both stores where it matters.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/charge': json({ charged: true }, 700), '/hang': json({ charged: true }, 5_000), '/slot': json({ ok: true }, 600), '/quick': json({ ok: true }) });
  d = await startApp(`
tools:
  - { name: charge, effect: side_effect, timeout_ms: 3000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }
  - { name: hang, effect: side_effect, timeout_ms: 900, retry: { max_attempts: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/hang" } }
  - { name: capped, effect: side_effect, timeout_ms: 3000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slot" } }
  - { name: quick, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/quick" } }
policies:
  - { match: capped, concurrency: { max_in_flight: 1, wait_ms: 2000 } }
`);
  // The app's first call loads and compiles what calls use: under a clean-clone CI's load that
  // held this process's event loop, the client's 250 ms deadline told at 761 ms (the tool answers at 700).
  await d.dispatch.dispatch({ sessionId: 'warm', calls: [{ id: 'w1', name: 'quick', arguments: '{}' }] });
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const call = (session: string, name: string, args: string, deadlineMs?: number) => d.dispatch.dispatch({ sessionId: session, calls: [{ id: `c${Math.random()}`, name, arguments: args }] }, deadlineMs === undefined ? {} : { deadlineMs });
const statusOf = (promise: Promise<unknown>) => promise.then(() => grpc.status.OK, (error: { code: number }) => error.code);

test("a deadline mid-call: DEADLINE_EXCEEDED at the deadline, IN_PROGRESS meanwhile, then the tool's answer replayed; the tool ran once", async () => {
  const before = tools.count('/charge');
  const started = Date.now();
  expect(await statusOf(call('s1', 'charge', '{"order":1}', 250))).toBe(grpc.status.DEADLINE_EXCEEDED);
  expect(Date.now() - started).toBeLessThan(600);
  const [meanwhile] = (await call('s1', 'charge', '{"order":1}')).results;
  expect(meanwhile!.error).toMatchObject({ kind: ErrorKind.IN_PROGRESS, recoverable: true });
  await sleep(800);
  const [again] = (await call('s1', 'charge', '{"order":1}')).results;
  expect(again).toMatchObject({ isError: false, idempotentReplay: true, output: '{"charged":true}' });
  expect(tools.count('/charge') - before).toBe(1);
  expect(tools.received.filter((r) => r.path === '/charge').at(-1)!.end! - started).toBeGreaterThanOrEqual(650);
});

test('past the deadline the tool still has only its own timeout: then OUTCOME_UNKNOWN, as for any timeout while it ran', async () => {
  expect(await statusOf(call('s2', 'hang', '{"order":2}', 200))).toBe(grpc.status.DEADLINE_EXCEEDED);
  await sleep(1_000);
  const [again] = (await call('s2', 'hang', '{"order":2}')).results;
  expect(again!.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
});

test("a client's cancel still cuts the request off: the same call gets OUTCOME_UNKNOWN", async () => {
  const pending = d.dispatch.dispatch({ sessionId: 's3', calls: [{ id: 'c1', name: 'charge', arguments: '{"order":3}' }] }, { signal: AbortSignal.timeout(250) });
  await expect(pending).rejects.toBeDefined();
  await sleep(100);
  const [again] = (await call('s3', 'charge', '{"order":3}')).results;
  expect(again!.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
});

test('the outlived attempt keeps its concurrency slot until its tool answers: the tool never sees two calls at once', async () => {
  expect(await statusOf(call('s4', 'capped', '{"n":1}', 200))).toBe(grpc.status.DEADLINE_EXCEEDED);
  const [other] = (await call('s4', 'capped', '{"n":2}')).results;
  expect(other!.isError).toBe(false);
  expect(maxInFlight(tools.received.filter((r) => r.path === '/slot'))).toBe(1);
});
