import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

// Found in a deadline hunt: a retry was begun whenever its backoff ended before the request's
// deadline, however little was left of it (1 ms), so a retry that could not finish was cut by the
// deadline: the whole turn ended DEADLINE_EXCEEDED, the results of its other calls lost, and a
// side-effecting call first refused by a 429 (not run) reached its tool and left its key
// OUTCOME_UNKNOWN. Giving the client more time gave a worse answer than giving it less (a backoff
// past the deadline ends the call soft). Now a retry needs what is left after its backoff to hold
// the deadline's slack and, read-only, as long as its tool ran in the failed attempt (at least
// 100 ms); side-effecting, its whole timeout; else the call ends with its error, soft.
// Then found in review: a read-only retry needed a tenth of the tool's timeout (3 s of the default
// 30 s) however fast it failed, and its failed attempt's time counted its waits for a slot: a
// cheap retry of a 503 in a few ms was refused under an ordinary 2.5 s deadline.
// Real HTTP tools behind a real gRPC dispatch with real RPC deadlines; margins of 500 ms or more.

let tools: ToolServer;
let d: TestDispatch;
const seen = new Map<string, number>();

/** The how-manieth request this is for the call's arguments' `n`, from 1. */
const nth = (body: Record<string, unknown>): number => {
  const n = String((body.arguments as { n?: unknown } | undefined)?.n);
  const count = (seen.get(n) ?? 0) + 1;
  seen.set(n, count);
  return count;
};
const after = (ms: number, answer: () => void) => void setTimeout(answer, ms).unref();

beforeAll(async () => {
  tools = await startToolServer({
    // The first request per `n` is refused (429, Retry-After: 1, not run) after 100 ms; later ones answer after 800 ms.
    '/limited': (req, res) => (nth(req.body) === 1 ? after(100, () => res.writeHead(429, { 'retry-after': '1' }).end('slow down')) : after(800, () => res.writeHead(200).end('{"sent":true}'))),
    // The first request per `n` answers 503 after 800 ms; later ones answer at once.
    '/flaky': (req, res) => (nth(req.body) === 1 ? after(800, () => res.writeHead(503).end('upstream down')) : after(0, () => res.writeHead(200).end('{"ok":true}'))),
    '/ok': (_req, res) => void res.writeHead(200).end('{"ok":true}'),
    // The first request per `n` answers 503 at once; later ones answer at once. `n: "hold-..."` answers after 1500 ms.
    '/quick-flaky': (req, res) => {
      if (String((req.body.arguments as { n?: unknown }).n).startsWith('hold')) return after(1_500, () => res.writeHead(200).end('{"held":true}'));
      return nth(req.body) === 1 ? void res.writeHead(503).end('busy') : void res.writeHead(200).end('{"price":42}');
    },
  });
  d = await startDispatch(`
tools:
  - { name: send, effect: side_effect, timeout_ms: 8000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/limited" } }
  - { name: send_quick, effect: side_effect, timeout_ms: 2000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/limited" } }
  - { name: status, effect: read_only, timeout_ms: 8000, retry: { max_attempts: 3, initial_backoff_ms: 500, jitter: 0 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/flaky" } }
  - { name: lookup, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/ok" } }
  - { name: quote, effect: read_only, skip_memoize: true, retry: { max_attempts: 3, initial_backoff_ms: 50, max_backoff_ms: 200 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/quick-flaky" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let runs = 0;
const one = (session: string, name: string, n: number | string, deadlineMs: number, on = d) =>
  on.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: JSON.stringify({ n }) }] }, { deadlineMs }).then((r) => r.results[0]!);

test("a side-effecting 429 whose retry could not finish before the deadline is not retried: soft, not run, and the same call again runs", async () => {
  const n = ++runs;
  // The 429 comes at ~100 ms, its Retry-After ends at ~1100 ms, 500 ms before the deadline: less than the tool's 8 s timeout.
  const first = await one('room-send', 'send', n, 1_600);
  expect(first.attempts).toBe(1);
  expect(first.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: true, retryAfterMs: 1_000 });
  expect(first.warnings).toHaveLength(1);
  expect(first.warnings[0]).toMatch(/^not retried: after waiting 1000 ms to retry, \d+ ms would be left before the request's deadline; a retry needs 8\d\d\d ms \(the tool's whole timeout/);
  // Its 8 s timeout is longer than the whole 1.6 s request: never retried under it, and the warning says so.
  expect(first.warnings[0]).toMatch(/; its timeout_ms \(8000\) is longer than the request's, so it is never retried under it, and time to answer\)$/);
  expect(tools.received.filter((r) => (r.body.arguments as { n: number }).n === n)).toHaveLength(1);
  // Its claim was given back (a 429 is no outcome): the model's call again runs, no OUTCOME_UNKNOWN.
  const again = await one('room-send', 'send', n, 10_000);
  expect(again.isError).toBe(false);
  expect(again.idempotentReplay).toBe(false);
  expect(again.output).toBe('{"sent":true}');
}, 15_000);

test('a side-effecting 429 whose retry can finish before the deadline is still retried', async () => {
  // Retry-After ends at ~1100 ms, ~4900 ms before the deadline: more than the tool's 2 s timeout.
  const result = await one('room-send-quick', 'send_quick', ++runs, 6_000);
  expect(result.isError).toBe(false);
  expect(result.attempts).toBe(2);
  expect(result.output).toBe('{"sent":true}');
}, 10_000);

test("a read-only retry with less time left than its failed attempt took is not begun: the turn keeps its other results", async () => {
  const n = ++runs;
  // b's 503 comes at ~800 ms, its 500 ms backoff ends at ~1300 ms, 600 ms before the deadline: less than the 800 ms it took.
  const response = await d.dispatch.dispatch(
    {
      sessionId: 'room-read',
      calls: [
        { id: 'a', name: 'lookup', arguments: JSON.stringify({ n }) },
        { id: 'b', name: 'status', arguments: JSON.stringify({ n }) },
      ],
    },
    { deadlineMs: 800 + 500 + 600 },
  );
  const [a, b] = response.results;
  expect(a).toMatchObject({ toolCallId: 'a', isError: false, output: '{"ok":true}' });
  expect(b).toMatchObject({ toolCallId: 'b', isError: true, attempts: 1 });
  expect(b!.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: true });
  expect(b!.warnings).toHaveLength(1);
  expect(b!.warnings[0]).toMatch(/^not retried: /);
}, 10_000);

test('a read-only retry with time enough left is still retried', async () => {
  const result = await one('room-read-ok', 'status', ++runs, 800 + 500 + 3_000);
  expect(result.isError).toBe(false);
  expect(result.attempts).toBe(2);
}, 10_000);

test("a read-only tool with the default timeout failing fast is retried under a 2.5 s deadline: a tenth of its timeout is not asked", async () => {
  // 503 in a few ms, a 50 ms backoff: ~2.4 s left, far more than the retry needs. Before, it needed
  // 3 s (a tenth of the default 30 s timeout) and the slack: TOOL_ERROR, attempts 1, `not retried`.
  const result = await one('room-quick', 'quote', ++runs, 2_500);
  expect(result.warnings).toEqual([]);
  expect(result).toMatchObject({ isError: false, attempts: 2, output: '{"price":42}' });
}, 10_000);

test('a read-only retry needs as long as its tool ran, not the wait for a slot before it', async () => {
  // The whole app (startDispatch's pipeline takes no policies): its `concurrency:` cap holds.
  const app = await startApp(`
tools:
  - { name: quote_capped, effect: read_only, skip_memoize: true, timeout_ms: 2000, retry: { max_attempts: 3, initial_backoff_ms: 50, max_backoff_ms: 200, jitter: 0 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/quick-flaky" } }
policies:
  - match: quote_capped
    concurrency: { max_in_flight: 1, wait_ms: 5000 }
`);
  try {
    const n = ++runs;
    // Another request holds the tool's only slot for 1500 ms; this one waits for it, then its 503 comes
    // at once: after the 50 ms backoff ~950 ms are left, less than the attempt took (~1500 ms, its
    // wait counted before) but far more than its tool ran (a few ms, at least 100 ms).
    const holder = one('room-slot-holder', 'quote_capped', `hold-${n}`, 10_000, app);
    await until(() => tools.received.some((r) => (r.body.arguments as { n: unknown }).n === `hold-${n}`) || undefined, 'the slot held');
    const result = await one('room-slot', 'quote_capped', n, 2_500, app);
    expect(result.warnings).toEqual([]);
    expect(result).toMatchObject({ isError: false, attempts: 2, output: '{"price":42}' });
    expect((await holder).output).toBe('{"held":true}');
  } finally {
    await app.close();
  }
}, 15_000);

test('no deadline: retried as before', async () => {
  const result = await d.dispatch.dispatch({ sessionId: 'room-none', calls: [{ id: 'c', name: 'status', arguments: JSON.stringify({ n: ++runs }) }] }).then((r) => r.results[0]!);
  expect(result.isError).toBe(false);
  expect(result.attempts).toBe(2);
}, 10_000);
