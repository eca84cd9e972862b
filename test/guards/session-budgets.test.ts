import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { TestRedis } from '../helpers/redis-server';
import { json, type ToolServer } from '../helpers/servers';
import { closeReplicaPair, startReplicaPair, type Replica } from './replica-pair';

// `budget:` policies bound the calls of the matching tools one session may make, whichever
// replica a call lands on: two apps sharing a real Redis and a real HTTP tool that counts what
// reaches it. A retry does not count again; another session, or the same one after EndSession,
// has its whole budget.

jest.setTimeout(30_000);

const tool = (name: string, url: string, extra = '', effect = 'side_effect') => `
  - name: ${name}
    effect: ${effect}
    input_schema: '{"type":"object"}'
    http: { url: "${url}/${name}" }${extra}`;

const yaml = (url: string) => `
tools:${tool('send_mail', url)}${tool('send_sms', url)}${tool('flaky_lookup', url, '\n    retry: { max_attempts: 2, initial_backoff_ms: 10 }', 'read_only')}${tool('search', url, '', 'read_only')}
  - name: paced_mail
    effect: side_effect
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 3 }
    http: { url: "${url}/paced_mail" }
policies:
  - match: search
    budget: { max_calls_per_session: 3 }
  - match: paced_mail
    rate: { per_second: 20, burst: 1 }
  - match: paced_mail
    budget: { max_calls_per_session: 1 }
  - match: ["send_*"]
    budget: { max_calls_per_session: 3 }
  - match: flaky_lookup
    budget: { max_calls_per_session: 1 }
`;

let redis: TestRedis;
let tools: ToolServer;
let a: Replica;
let b: Replica;
let failures = 0;
beforeAll(async () => {
  ({ redis, tools, a, b } = await startReplicaPair(yaml, {
    '/send_mail': json({ sent: true }),
    '/send_sms': json({ sent: true }),
    '/search': json({ found: true }),
    '/paced_mail': json({ sent: true }),
    // Fails with a 503 the first time it is called (a read-only tool's 503 is retried), then answers.
    '/flaky_lookup': (_req, res) => void (failures++ === 0 ? res.writeHead(503).end('try again') : res.writeHead(200).end('{"sent":true}')),
  }));
});
afterAll(() => closeReplicaPair({ redis, tools, a, b }));

let n = 0;
const call = (app: Replica, sessionId: string, name: string) => app.dispatch.dispatch({ sessionId, calls: [{ id: `c${++n}`, name, arguments: `{"n":${n}}` }] }).then((r) => r.results[0]!);

test('a session gets its budget of calls of the matching tools together, on any replica; then each is refused BLOCKED, not executed', async () => {
  const results = [await call(a, 'budgeted', 'send_mail'), await call(b, 'budgeted', 'send_sms'), await call(a, 'budgeted', 'send_mail')];
  expect(results.every((r) => !r.isError)).toBe(true);
  // The model is told when the budget is nearly spent (a fifth or less left, at least the last).
  expect(results.map((r) => r.warnings)).toEqual([
    [],
    ['this session has 1 call left of its budget of 3 calls of tools matching send_* (policies budget:)'],
    ["this was the last call of this session's budget of 3 calls of tools matching send_* (policies budget:)"],
  ]);
  for (const app of [b, a]) {
    const refused = await call(app, 'budgeted', 'send_sms');
    expect(refused.error?.kind).toBe(ErrorKind.BLOCKED);
    expect(refused.error?.recoverable).toBe(false);
    expect(refused.error?.message).toBe('this session has used its budget of 3 calls of tools matching send_* (policies budget:); this call was not executed');
  }
  expect(tools.count('/send_mail') + tools.count('/send_sms')).toBe(3);
  // Another session has its own budget.
  expect((await call(b, 'another', 'send_mail')).isError).toBe(false);
});

test('EndSession gives the session its whole budget again', async () => {
  for (let i = 0; i < 3; i++) await call(a, 'ended', 'send_mail');
  expect((await call(a, 'ended', 'send_mail')).error?.kind).toBe(ErrorKind.BLOCKED);
  await b.dispatch.endSession({ sessionId: 'ended' });
  expect((await call(a, 'ended', 'send_mail')).isError).toBe(false);
});

test('a call counts once, however many attempts it takes', async () => {
  const retried = await call(a, 'flaky', 'flaky_lookup');
  expect(retried.isError).toBe(false);
  expect(retried.attempts).toBe(2);
  expect((await call(b, 'flaky', 'flaky_lookup')).error?.kind).toBe(ErrorKind.BLOCKED);
  expect(tools.count('/flaky_lookup')).toBe(2);
});

test('a call whose first attempt a rate limit refused counts at the attempt that gets through', async () => {
  // 20 per second, burst 1: the second of two calls at once is refused its turn (retry_after
  // ~50 ms) and retried; that retry must count against the budget of 1 like any first attempt.
  const both = await Promise.all([call(a, 'paced', 'paced_mail'), call(a, 'paced', 'paced_mail')]);
  expect(both.map((r) => r.attempts).sort()).toEqual([1, 2]);
  expect(both.filter((r) => !r.isError)).toHaveLength(1);
  expect(both.find((r) => r.isError)?.error?.kind).toBe(ErrorKind.BLOCKED);
  expect(tools.count('/paced_mail')).toBe(1);
  await new Promise((r) => setTimeout(r, 100));
  expect((await call(b, 'paced', 'paced_mail')).error?.kind).toBe(ErrorKind.BLOCKED);
  expect(tools.count('/paced_mail')).toBe(1);
});

test('while Redis is away, each replica goes on counting a session from the last count it saw', async () => {
  expect((await call(a, 'outage', 'search')).isError).toBe(false);
  await redis.stop();
  try {
    // Read-only calls run without the store. Replica A saw 1 of 3 counted: 2 more, then refused.
    const onA = [await call(a, 'outage', 'search'), await call(a, 'outage', 'search'), await call(a, 'outage', 'search')];
    expect(onA.map((r) => r.isError)).toEqual([false, false, true]);
    expect(onA[1]!.warnings).toContain("this was the last call of this session's budget of 3 calls of \"search\" (policies budget:)");
    expect(onA[2]!.error?.kind).toBe(ErrorKind.BLOCKED);
    expect(onA[2]!.error?.message).toBe('this session has used its budget of 3 calls of "search" (policies budget:); this call was not executed');
    // Replica B never saw the session: it counts from zero, so it too stops the session (at 3 of its own).
    const onB = [await call(b, 'outage', 'search'), await call(b, 'outage', 'search'), await call(b, 'outage', 'search'), await call(b, 'outage', 'search')];
    expect(onB.map((r) => r.isError)).toEqual([false, false, false, true]);
    expect(tools.count('/search')).toBe(6);
  } finally {
    await redis.start();
  }
});
