import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startWorkerApp, type WorkerApp } from './worker-app';

// A tool author's probe: a side-effecting worker call whose worker answered 1.5 s past its 1 s
// timeout stayed OUTCOME_UNKNOWN for the record's hour, though the worker had said what it did:
// dispatch dropped its answer. Now the answer replaces the UNKNOWN mark (late-answer.ts), on the
// memory store and on Redis. Real Work streams, a real redis-server.

const TIMEOUT_MS = 150;
const LATE_MS = 400;
const tool = (name: string, effect = Effect.SIDE_EFFECT) => ({ name, description: name, inputSchema: '{"type":"object"}', effect, timeoutMs: TIMEOUT_MS, retry: { maxAttempts: 1 } });

const lines: string[] = [];
const logger: Logger = { debug() {}, info: (m) => void lines.push(m), warn: (m) => void lines.push(m), error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `ask` again until its answer is replayed (the late answer recorded), for 5 s at most. */
async function replayed<T extends { idempotentReplay: boolean }>(ask: (n: number) => Promise<T>): Promise<T> {
  for (let n = 0, deadline = Date.now() + 5_000; ; n++) {
    const answer = await ask(n);
    if (answer.idempotentReplay || Date.now() > deadline) return answer;
    await sleep(50);
  }
}

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(() => redis?.close());

describe.each([
  ['the memory store', () => startWorkerApp({}, { logger })],
  ['Redis', () => startWorkerApp({}, { logger, redisUrl: redis.url })],
])('on %s', (_, start) => {
  let t: WorkerApp;
  beforeEach(async () => {
    lines.length = 0;
    t = await start();
  });
  afterEach(() => t.close());

  // Sessions of their own per test: the Redis is shared by the tests of the file.
  let prefix = '';
  beforeEach(() => void (prefix = `${Math.random()}-`));
  const call = (name: string, id: string, session = 's1', args = { to: 'a@example.com' }) => t.dispatch.dispatch({ sessionId: prefix + session, calls: [{ id, name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);
  /** Answers after LATE_MS, past the call's timeout. */
  const lateWorker = (output: string, isError = false, name = 'w_send', effect = Effect.SIDE_EFFECT) =>
    t.worker({ id: 'w1', tools: [tool(name, effect)], answer: () => sleep(LATE_MS).then(() => ({ output, isError })) });

  test('the answer after the timeout replaces OUTCOME_UNKNOWN: the same call made again is replayed, and ran once', async () => {
    const worker = await lateWorker('sent to a@example.com');
    const first = await call('w_send', 'c1');
    expect(first.error).toMatchObject({ kind: ErrorKind.TIMEOUT, recoverable: false });
    // Before its answer: unknown, as before.
    expect((await call('w_send', 'c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
    const again = await replayed((n) => call('w_send', `c3-${n}`));
    expect(again).toMatchObject({ isError: false, output: 'sent to a@example.com', idempotentReplay: true });
    expect(worker.assignments).toHaveLength(1);
    expect(lines).toContain("a side-effecting call's tool answered after its timeout; the answer replaces OUTCOME_UNKNOWN for the same call made again");
  });

  test("a late error is recorded as the tool's error, replayed", async () => {
    await lateWorker('mailbox full', true);
    expect((await call('w_send', 'c1')).error?.kind).toBe(ErrorKind.TIMEOUT);
    const again = await replayed((n) => call('w_send', `c2-${n}`));
    expect(again.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: expect.stringContaining('mailbox full') });
    expect(again.idempotentReplay).toBe(true);
  });

  test('a session ended before the answer: the answer is not recorded in it, and the log says so', async () => {
    const worker = await lateWorker('sent');
    expect((await call('w_send', 'c1', 's-end')).error?.kind).toBe(ErrorKind.TIMEOUT);
    await t.dispatch.endSession({ sessionId: `${prefix}s-end` });
    await sleep(LATE_MS + 200);
    expect(lines).toContain("a side-effecting call's tool answered after its timeout; its record had changed since (the session ended, or it expired), so the answer was not recorded");
    // Its records gone with the session, the call runs again (as it did before this change).
    expect((await call('w_send', 'c2', 's-end')).error?.kind).toBe(ErrorKind.TIMEOUT);
    expect(worker.assignments).toHaveLength(2);
  });

  test("another call's record is never replaced: different arguments keep their own records", async () => {
    await lateWorker('sent');
    expect((await call('w_send', 'c1', 's1', { to: 'a' })).error?.kind).toBe(ErrorKind.TIMEOUT);
    expect((await call('w_send', 'c2', 's1', { to: 'b' })).error?.kind).toBe(ErrorKind.TIMEOUT);
    expect(await replayed((n) => call('w_send', `c3-${n}`, 's1', { to: 'a' }))).toMatchObject({ output: 'sent', idempotentReplay: true });
    expect(await replayed((n) => call('w_send', `c4-${n}`, 's1', { to: 'b' }))).toMatchObject({ output: 'sent', idempotentReplay: true });
  });

  test('a read-only call answered late records nothing: the same call runs again', async () => {
    const worker = await lateWorker('found', false, 'w_find', Effect.READ_ONLY);
    expect((await call('w_find', 'c1')).error?.kind).toBe(ErrorKind.TIMEOUT);
    await sleep(LATE_MS + 200);
    expect((await call('w_find', 'c2')).error?.kind).toBe(ErrorKind.TIMEOUT);
    expect(worker.assignments).toHaveLength(2);
  });
});

test('the worker gone before it answers: the call stays OUTCOME_UNKNOWN, and nothing waits on', async () => {
  const t = await startWorkerApp({}, { logger });
  try {
    const worker = await t.worker({ id: 'w1', tools: [tool('w_send')], answer: () => sleep(LATE_MS).then(() => ({ output: 'sent' })) });
    const call = (id: string) => t.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'w_send', arguments: '{}' }] }).then((r) => r.results[0]!);
    expect((await call('c1')).error?.kind).toBe(ErrorKind.TIMEOUT);
    worker.disconnect();
    await sleep(LATE_MS + 200);
    expect((await call('c2')).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  } finally {
    await t.close();
  }
});
