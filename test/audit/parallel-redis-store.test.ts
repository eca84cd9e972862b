import { DispatchMode, ErrorKind, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Issue 3 and issue 5 together: every Redis test runs sequential turns, every parallel test the
// memory store. Here parallel turns on two replicas sharing Redis: identical side-effecting calls
// spread over both run once; with Redis frozen, a parallel turn's side-effecting calls fail closed
// within the store timeout, not executed, while its read-only calls run.

jest.setTimeout(60_000);

// The 160 calls of one session are one call to the loop window (the same tool and ref): on a slow
// machine more of them came after the first had run, and 10 replays of its result in a row ended a
// turn LOOP_DETECTED (a clean-clone CI run). Loop detection is not what this file tests: pay's stop
// threshold is above the calls.

const STORE_TIMEOUT_MS = 400;
let redis: TestRedis;
let tools: ToolServer;
let a: TestDispatch;
let b: TestDispatch;
let paid = 0;

const YAML = (url: string) => `limits: { store_timeout_ms: ${STORE_TIMEOUT_MS} }
tools:
  - { name: pay, effect: side_effect, concurrency_safe: true, retry: { max_attempts: 1 }, idempotency: { key_fields: ["/ref"] }, loop: { stop_threshold: 200 }, http: { url: "${url}/pay" } }
  - { name: look, effect: read_only, concurrency_safe: true, http: { url: "${url}/look" } }
`;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer({
    '/pay': (_req, res) => {
      paid++;
      setTimeout(() => res.writeHead(200).end(`paid #${paid}`), 100);
    },
    '/look': (_req, res) => void res.writeHead(200).end('seen'),
  });
  a = await startApp(YAML(tools.url), { redisUrl: redis.url });
  b = await startApp(YAML(tools.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  await redis?.close();
});

const kindOf = (r: ToolResult) => (r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'REPLAY' : 'OK');

test('parallel turns of identical side-effecting calls on two replicas: one execution, every other call a replay or IN_PROGRESS', async () => {
  paid = 0;
  const turns = Array.from({ length: 20 }, (_, t) =>
    (t % 2 === 0 ? a : b).dispatch.dispatch({
      sessionId: 'par-dup',
      mode: DispatchMode.PARALLEL,
      calls: Array.from({ length: 8 }, (_, i) => ({ id: `t${t}c${i}`, name: 'pay', arguments: JSON.stringify({ ref: 'r1', note: i }) })),
    }),
  );
  const results = (await Promise.all(turns)).flatMap((r) => r.results);
  expect(results).toHaveLength(160);
  const kinds = results.map(kindOf);
  expect(kinds.filter((k) => k === 'OK')).toHaveLength(1);
  expect(kinds.every((k) => k === 'OK' || k === 'REPLAY' || k === 'IN_PROGRESS')).toBe(true);
  expect(paid).toBe(1);
  const ran = results.find((r) => kindOf(r) === 'OK')!;
  for (const r of results.filter((x) => kindOf(x) === 'REPLAY')) expect(r.output).toBe(ran.output);
});

test('Redis frozen: a parallel turn answers within the store timeout; side effects STORE_UNAVAILABLE and not run, reads run', async () => {
  paid = 0;
  const looked = tools.count('/look');
  redis.signal('SIGSTOP');
  try {
    const started = Date.now();
    const { results } = await a.dispatch.dispatch(
      {
        sessionId: 'par-frozen',
        mode: DispatchMode.PARALLEL,
        calls: [
          ...[1, 2, 3].map((n) => ({ id: `p${n}`, name: 'pay', arguments: JSON.stringify({ ref: `f${n}` }) })),
          ...[1, 2, 3].map((n) => ({ id: `l${n}`, name: 'look', arguments: JSON.stringify({ q: n }) })),
        ],
      },
      { deadlineMs: 10_000 },
    );
    const ms = Date.now() - started;
    expect(results.map((r) => [r.toolCallId, kindOf(r)])).toEqual([
      ['p1', 'STORE_UNAVAILABLE'],
      ['p2', 'STORE_UNAVAILABLE'],
      ['p3', 'STORE_UNAVAILABLE'],
      ['l1', 'OK'],
      ['l2', 'OK'],
      ['l3', 'OK'],
    ]);
    // One wave: the store timeouts overlap (each call waits one, plus the read-only calls' write).
    expect(ms).toBeLessThan(4 * STORE_TIMEOUT_MS + 1_000);
    expect(paid).toBe(0);
    expect(tools.count('/look')).toBe(looked + 3);
  } finally {
    redis.signal('SIGCONT');
  }
  // Recovered: the claims Redis ran when it thawed are released by their owners (as in sequential
  // mode, test/redis/store-down); the same calls soon run, once each.
  const deadline = Date.now() + 4_000;
  let kinds: string[] = [];
  while (Date.now() < deadline) {
    const { results } = await b.dispatch.dispatch({ sessionId: 'par-frozen', mode: DispatchMode.PARALLEL, calls: [1, 2, 3].map((n) => ({ id: `q${n}`, name: 'pay', arguments: JSON.stringify({ ref: `f${n}` }) })) });
    kinds = results.map(kindOf);
    if (kinds.every((k) => k !== 'STORE_UNAVAILABLE' && k !== 'IN_PROGRESS')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Each ran once: in this turn, or in an earlier try of the loop whose other calls were still
  // refused (a loaded clean-clone CI run: ['REPLAY', 'OK', 'OK']), replayed now.
  expect(kinds.every((k) => k === 'OK' || k === 'REPLAY')).toBe(true);
  expect(paid).toBe(3);
});
