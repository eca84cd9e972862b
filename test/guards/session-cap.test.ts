import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in review: the memory store (the default) evicted the least recently used sessions past
// limits.max_sessions with their budget counts and loop windows, so a model that spread calls over
// other sessions started its own budget and loop detection again from zero. Now a live session
// is never evicted: a new one is refused while the cap is full, its side-effecting calls fail
// closed (STORE_UNAVAILABLE, not executed). Through the gRPC service, with a real HTTP tool.

const yaml = (url: string) => `
limits: { max_sessions: 3 }
tools:
  - name: send_mail
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send_mail" }
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/lookup" }
policies:
  - match: send_mail
    budget: { max_calls_per_session: 2 }
`;

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/send_mail': json({ sent: true }), '/lookup': json({ found: 'same' }) });
  d = await startApp(yaml(tools.url));
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

let n = 0;
const call = (sessionId: string, name: string, args: object = { n: ++n }) =>
  d.dispatch.dispatch({ sessionId, calls: [{ id: `c${++n}`, name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);
const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));

test("other sessions' traffic past max_sessions neither restarts a session's budget nor its loop streak", async () => {
  expect((await call('model', 'send_mail')).isError).toBe(false);
  for (let i = 0; i < 2; i++) expect(loopWarnings((await call('model', 'lookup', { q: 'x' })).warnings)).toEqual([]);

  const others = [];
  for (let i = 0; i < 10; i++) others.push(await call(`other-${i}`, 'send_mail'));
  // Two fit beside the model's session; the rest are refused, not executed.
  expect(others.slice(0, 2).every((r) => !r.isError)).toBe(true);
  for (const refused of others.slice(2)) {
    expect(refused.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
    expect(refused.error?.message).toBe('the idempotency store could not record this call (unreachable, or out of room), so this side-effecting call was not executed');
  }
  expect(tools.count('/send_mail')).toBe(3);

  expect(loopWarnings((await call('model', 'lookup', { q: 'x' })).warnings)).toHaveLength(1);
  expect((await call('model', 'send_mail')).isError).toBe(false);
  const over = await call('model', 'send_mail');
  expect(over.error?.kind).toBe(ErrorKind.BLOCKED);
  expect(over.error?.message).toBe('this session has used its budget of 2 calls of "send_mail" (policies budget:); this call was not executed');
  expect(tools.count('/send_mail')).toBe(4);

  // A session that ends makes room for a new one.
  await d.dispatch.endSession({ sessionId: 'other-0' });
  expect((await call('newcomer', 'send_mail')).isError).toBe(false);
});
