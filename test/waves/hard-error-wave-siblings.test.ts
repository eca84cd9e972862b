import * as grpc from '@grpc/grpc-js';
import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { failure } from '../contract/error-info';

// An agent author's probe of parallel turns: a wave that another call's hard error ended (a loop
// stop of a read) left out of the ErrorInfo the calls of that wave that had finished, a sent email
// among them (and cut a side-effecting sibling off mid-request, which the docs did not say). Now the
// ErrorInfo names every call that had finished; a side-effecting call at its tool is still cut off
// (DESIGN section 3, issue 5: the siblings' executors see the abort), and is not named. Real HTTP tools.

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

test("a side-effecting sibling at its tool is cut off, as DESIGN asks: OUTCOME_UNKNOWN, and it is not named among the finished", async () => {
  await nearLoop('p2');
  const before = tools.count('/charge');
  const calls = [{ id: 'pay', name: 'charge', arguments: '{"order":7}' }, { id: 'look', name: 'read', arguments: '{"n":2}' }, LOOPING];
  // The loop starts once the read ends (~100 ms), while the charge's request is at its tool.
  const info = await failure(d.dispatch.dispatch({ sessionId: 'p2', mode: DispatchMode.PARALLEL, maxConcurrency: 2, calls }));
  expect(info).toMatchObject({ reason: 'LOOP_DETECTED', metadata: expect.objectContaining({ calls_completed: '1', completed_call_ids: 'look' }) });
  const again = () => d.dispatch.dispatch({ sessionId: 'p2', calls: [{ id: 'pay2', name: 'charge', arguments: '{"order":7}' }] }).then((r) => r.results[0]!);
  // Its record is written as it unwinds: IN_PROGRESS until then.
  let kind: ErrorKind | undefined = ErrorKind.IN_PROGRESS;
  for (let i = 0; kind === ErrorKind.IN_PROGRESS && i < 40; i++) {
    if (i > 0) await sleep(50);
    kind = (await again()).error?.kind;
  }
  expect(kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(tools.count('/charge') - before).toBe(1);
});
