import * as grpc from '@grpc/grpc-js';
import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { failure } from '../contract/error-info';

// An agent author's probe of parallel turns: a wave that another call's hard error ended (a loop
// stop of a read) (1) left out of the ErrorInfo the calls of that wave that had finished, a sent
// email among them, and (2) cut a side-effecting sibling off mid-request, its record UNKNOWN: the
// same call got OUTCOME_UNKNOWN for the record's hour, though nobody had asked to stop it. Now the
// ErrorInfo names every call that had finished, and a side-effecting call at its tool runs on (as
// past a deadline: outlived-attempt.ts). Real HTTP tools.

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/send': json({ sent: true }), '/charge': json({ charged: true }, 700), '/read': json({ rows: 1 }, 100) });
  d = await startApp(`tools:
  - { name: send_email, effect: side_effect, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/send" } }
  - { name: charge, effect: side_effect, concurrency_safe: true, timeout_ms: 3000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/charge" } }
  - { name: read, effect: read_only, concurrency_safe: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/read" } }
  - { name: same, effect: read_only, concurrency_safe: true, loop: { warn_threshold: 2, stop_threshold: 3 }, builtin: { name: echo } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Three identical calls: the next one in `session` is stopped LOOP_DETECTED at its store step. */
const nearLoop = async (session: string) => {
  for (const id of ['w1', 'w2', 'w3']) await d.dispatch.dispatch({ sessionId: session, calls: [{ id, name: 'same', arguments: '{"q":1}' }] });
};
const LOOPING = { id: 'loop', name: 'same', arguments: '{"q":1}' };

test('the ErrorInfo names the calls of the failing wave that had finished: the email that was sent', async () => {
  await nearLoop('p1');
  const before = tools.count('/send');
  const calls = [{ id: 'mail', name: 'send_email', arguments: '{"to":"ana"}' }, { id: 'slow', name: 'read', arguments: '{"n":1}' }, LOOPING];
  // Two at once: the loop starts once the email has been sent, while the read runs.
  const info = await failure(d.dispatch.dispatch({ sessionId: 'p1', mode: DispatchMode.PARALLEL, maxConcurrency: 2, calls }));
  expect(info).toMatchObject({ code: grpc.status.ABORTED, reason: 'LOOP_DETECTED' });
  expect(info.metadata).toMatchObject({ tool_call_id: 'loop', calls_completed: '1', completed_call_ids: 'mail' });
  expect(tools.count('/send') - before).toBe(1);
});

test("a side-effecting sibling at its tool runs on past the hard error: IN_PROGRESS meanwhile, then its answer replayed; it ran once, to its end", async () => {
  await nearLoop('p2');
  const before = tools.count('/charge');
  const started = Date.now();
  const calls = [{ id: 'pay', name: 'charge', arguments: '{"order":7}' }, { id: 'look', name: 'read', arguments: '{"n":2}' }, LOOPING];
  // The loop starts once the read ends (~100 ms), while the charge's request is at its tool.
  const info = await failure(d.dispatch.dispatch({ sessionId: 'p2', mode: DispatchMode.PARALLEL, maxConcurrency: 2, calls }));
  expect(info).toMatchObject({ reason: 'LOOP_DETECTED', metadata: expect.objectContaining({ completed_call_ids: 'look' }) });
  expect(Date.now() - started).toBeLessThan(600);
  const again = () => d.dispatch.dispatch({ sessionId: 'p2', calls: [{ id: 'pay2', name: 'charge', arguments: '{"order":7}' }] }).then((r) => r.results[0]!);
  expect((await again()).error).toMatchObject({ kind: ErrorKind.IN_PROGRESS, recoverable: true });
  await sleep(800);
  expect(await again()).toMatchObject({ isError: false, idempotentReplay: true, output: '{"charged":true}' });
  expect(tools.count('/charge') - before).toBe(1);
  const request = tools.received.filter((r) => r.path === '/charge').at(-1)!;
  expect(request.end! - request.start).toBeGreaterThanOrEqual(650);
});
