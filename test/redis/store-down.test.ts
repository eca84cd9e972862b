import { ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { createLogger } from '../../src/log';
import { DEFAULT_TENANT } from '../../src/server';
import { useRedisApp } from '../helpers/redis-app';

jest.setTimeout(60_000);

const STORE_TIMEOUT_MS = 400;
/** Longest a call may take in these tests; the client gives up then, so no test can hang. */
const CALL_DEADLINE_MS = 10_000;
const DROPPED = 'memory and loop record dropped';

const lines: string[] = [];
const paid = new Map<string, number>();

const env = useRedisApp({
  redis: { own: true, persistence: 'aof-always' },
  routes: {
    '/pay': (req, res) => {
      const ref = String((req.body.arguments as { ref: string }).ref);
      paid.set(ref, (paid.get(ref) ?? 0) + 1);
      res.writeHead(200).end(`paid ${ref}`);
    },
    '/look': (req, res) => void res.writeHead(200).end(`look ${String((req.body.arguments as { q: string }).q)}`),
    '/long': (_req, res) => void res.writeHead(200).end('x'.repeat(500)),
  },
  config: (url) => `limits: { store_timeout_ms: ${STORE_TIMEOUT_MS} }
tools:
  - name: pay
    effect: side_effect
    timeout_ms: 3000
    # one attempt, so STORE_UNAVAILABLE takes one store timeout (the default policy retries it)
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}'
    http: { url: "${url}/pay" }
  - name: look
    effect: read_only
    input_schema: '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}'
    http: { url: "${url}/look" }
  - name: long
    effect: read_only
    max_result_chars: 100
    http: { url: "${url}/long" }
`,
  app: { logger: createLogger('warn', (line) => lines.push(line) > 0) },
});

const call = async (sessionId: string, name: string, args: unknown): Promise<ToolResult> =>
  (await env.app.dispatch.dispatch({ sessionId, calls: [{ id: `c_${Math.random().toString(36).slice(2)}`, name, arguments: JSON.stringify(args) }] }, { deadlineMs: CALL_DEADLINE_MS })).results[0]!;

/** A call and how long it took, in ms. */
const timed = async (sessionId: string, name: string, args: unknown): Promise<{ result: ToolResult; ms: number }> => {
  const started = Date.now();
  const result = await call(sessionId, name, args);
  return { result, ms: Date.now() - started };
};

const kindOf = (r: ToolResult) => (r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'REPLAY' : 'OK');

/** The dropped-write log lines logged since line `from`, parsed. */
const droppedSince = (from: number) =>
  lines
    .slice(from)
    .map((l) => JSON.parse(l) as { message: string; tool?: string; error?: unknown })
    .filter((l) => l.message.includes(DROPPED));

/** Resolves once the service's store answers a read again; throws after 10 s. */
async function untilStoreAnswers(sessionId: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await env.app.app.deps.store.memory({ tenant: DEFAULT_TENANT, sessionId });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('Redis frozen (SIGSTOP): side effects fail closed within the store timeout, reads go on, nothing hangs, and SIGCONT recovers', async () => {
  const from = lines.length;
  env.redis.signal('SIGSTOP');
  try {
    const side = await timed('frozen', 'pay', { ref: 'frozen-1' });
    expect(kindOf(side.result)).toBe('STORE_UNAVAILABLE');
    expect(JSON.parse(side.result.output)).toMatchObject({ error: true, tool: 'pay', kind: 'STORE_UNAVAILABLE', recoverable: true });
    expect(side.ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 50);
    expect(side.ms).toBeLessThan(STORE_TIMEOUT_MS + 1000);

    const read = await timed('frozen', 'look', { q: 'frozen' });
    expect(read.result).toMatchObject({ isError: false, output: 'look frozen' });
    expect(read.ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);

    const started = Date.now();
    const concurrent = await Promise.all([
      ...[0, 1, 2, 3, 4].map((i) => call('frozen', 'pay', { ref: `frozen-c${i}` })),
      ...[0, 1, 2, 3, 4].map((i) => call('frozen', 'look', { q: `c${i}` })),
    ]);
    expect(Date.now() - started).toBeLessThan(STORE_TIMEOUT_MS + 2500);
    expect(concurrent.map(kindOf)).toEqual([...Array(5).fill('STORE_UNAVAILABLE'), ...Array(5).fill('OK')]);
    expect(concurrent.slice(5).map((r) => r.output)).toEqual(['look c0', 'look c1', 'look c2', 'look c3', 'look c4']);
  } finally {
    env.redis.signal('SIGCONT');
  }
  expect(env.tools.count('/pay')).toBe(0);
  // Six reads during the freeze: one line (at most one per 10 s per tool, saying how many it held back after).
  expect(droppedSince(from).map((l) => l.tool)).toEqual(['look']);

  await untilStoreAnswers('frozen');
  const first = await call('frozen', 'pay', { ref: 'after-thaw' });
  expect(first).toMatchObject({ isError: false, idempotentReplay: false, output: 'paid after-thaw' });
  expect(await call('frozen', 'pay', { ref: 'after-thaw' })).toMatchObject({ isError: false, idempotentReplay: true, output: 'paid after-thaw' });
  expect([...paid]).toEqual([['after-thaw', 1]]);

  // The call refused during the freeze had sent its claim, which Redis ran when it thawed; the
  // service releases it (as its owner) once Redis answers, instead of leaving the key IN_PROGRESS
  // for the whole lease (8 s here). Retrying the same call soon runs it, once.
  const thawed = Date.now();
  let retry = await call('frozen', 'pay', { ref: 'frozen-1' });
  while (kindOf(retry) === 'IN_PROGRESS' && Date.now() - thawed < 4_000) {
    await new Promise((r) => setTimeout(r, 100));
    retry = await call('frozen', 'pay', { ref: 'frozen-1' });
  }
  expect(retry).toMatchObject({ isError: false, idempotentReplay: false, output: 'paid frozen-1' });
  expect(Date.now() - thawed).toBeLessThan(4_000);
  expect(paid.get('frozen-1')).toBe(1);
});

test('Redis killed: a read-only call runs, logs that its memory entry and loop record are dropped, and leaves no entry once Redis is back', async () => {
  expect(await call('killed', 'look', { q: 'before' })).toMatchObject({ isError: false, output: 'look before' });
  await env.redis.stop('SIGKILL');
  try {
    const from = lines.length;
    const read = await timed('killed', 'look', { q: 'outage' });
    expect(read.result).toMatchObject({ isError: false, output: 'look outage' });
    expect(read.ms).toBeLessThan(STORE_TIMEOUT_MS + 1500);
    // A result cut short during the outage could not be spilled: it offers no handle to read
    // the rest with (one that led nowhere before).
    const cut = await call('killed', 'long', {});
    expect(cut).toMatchObject({ isError: false, truncated: true, resultHandle: '' });
    // Logged at most once per 10 s per tool: long's line (look's may be held since the freeze's).
    const dropped = droppedSince(from).filter((l) => l.tool === 'long');
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ message: `store unavailable at claim; read-only call runs without the store, ${DROPPED}`, tool: 'long' });
    expect(typeof dropped[0]!.error).toBe('string');
  } finally {
    await env.redis.start();
  }

  await untilStoreAnswers('killed');
  expect(await call('killed', 'look', { q: 'after' })).toMatchObject({ isError: false, output: 'look after' });
  expect(await untilStoreAnswers('killed')).toEqual(['tool=look; input={"q":"before"}; result=look before', 'tool=look; input={"q":"after"}; result=look after']);
});
