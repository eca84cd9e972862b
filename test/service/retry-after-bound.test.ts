import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in a contract audit: a tool's Retry-After was waited up to 60 s, beyond the tool's
// max_backoff_ms (default 10 s): without an RPC deadline, a read-only 503 with `Retry-After: 30`
// held the turn 30 s. A Retry-After longer than max_backoff_ms is not waited for: the call ends
// at once with its error, still recoverable, saying when to call again. One within it is waited
// as before. Real HTTP tools behind a real gRPC dispatch; no RPC deadline unless said.

let tools: ToolServer;
let d: TestDispatch;
let refusals = 0;

beforeAll(async () => {
  tools = await startToolServer({
    '/later': (_req, res) => void res.writeHead(503, { 'retry-after': '30' }).end('upstream busy'),
    '/much-later': (_req, res) => void res.writeHead(503, { 'retry-after': '120' }).end('maintenance'),
    '/hours-later': (_req, res) => void res.writeHead(503, { 'retry-after': '7200' }).end('long maintenance'),
    '/limited': (_req, res) => void res.writeHead(429, { 'retry-after': '30' }).end('slow down'),
    // Refuses the first `refusals` requests with a short Retry-After, then answers.
    '/soon': (_req, res) => {
      if (refusals > 0) {
        refusals--;
        res.writeHead(503, { 'retry-after': '1' }).end('one moment');
      } else res.writeHead(200).end('{"ok":true}');
    },
  });
  d = await startDispatch(`
tools:
  - { name: status_later, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/later" } }
  - { name: status_much_later, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/much-later" } }
  - { name: status_hours_later, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/hours-later" } }
  - { name: send_limited, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/limited" } }
  - { name: status_soon, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/soon" } }
  - { name: status_patient, effect: read_only, retry: { max_backoff_ms: 60000 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/later" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, session: string, deadlineMs?: number) =>
  d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: '{"job":"j1"}' }] }, deadlineMs === undefined ? {} : { deadlineMs }).then((r) => r.results[0]!);

test('a read-only 503 asking for 30 s, past max_backoff_ms (10 s): not waited, recoverable, says when to call again', async () => {
  const before = tools.count('/later');
  const started = Date.now();
  const result = await call('status_later', 'ra-later');
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(result.attempts).toBe(1);
  expect(tools.count('/later')).toBe(before + 1);
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: true, retryAfterMs: 30_000 });
  expect(result.error?.suggestion).toBe('The tool is busy and asked to be called again in 30 s (retry_after_ms); call it again then or later, unchanged, or use another tool meanwhile.');
  expect(JSON.parse(result.output)).toMatchObject({ recoverable: true, retry_after_ms: 30_000, retried: false });
  expect(result.warnings).toEqual(["not retried: the wait asked for (retry_after_ms 30000) is longer than the tool's max_backoff_ms (10000)"]);
}, 8_000);

test('a Retry-After over a minute is told as the tool said it (it is no longer waited, so no longer cut to 60 s)', async () => {
  const result = await call('status_much_later', 'ra-much-later');
  expect(result.attempts).toBe(1);
  expect(result.error?.retryAfterMs).toBe(120_000);
  expect(result.error?.suggestion).toContain('called again in 120 s');
}, 8_000);

test('a Retry-After past an hour is passed on as an hour, and the suggestion does not claim the tool asked for that', async () => {
  // Retry-After: 7200. retry_after_ms stops at an hour; "asked to be called again in 3600 s" would
  // misquote the tool.
  const result = await call('status_hours_later', 'ra-hours-later');
  expect(result.attempts).toBe(1);
  expect(result.error?.retryAfterMs).toBe(3_600_000);
  expect(result.error?.suggestion).toBe(
    'The tool is busy and asked to be called again in an hour or more (retry_after_ms 3600000 is the longest dispatch passes on); call it again no sooner, unchanged, or use another tool meanwhile.',
  );
}, 8_000);

test('a side-effecting 429 asking for 30 s: not waited, recoverable, its claim given back: the same call again reaches the tool', async () => {
  const first = await call('send_limited', 'ra-429');
  expect(first.attempts).toBe(1);
  expect(first.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: true, retryAfterMs: 30_000 });
  expect(first.warnings).toHaveLength(1);
  const second = await call('send_limited', 'ra-429');
  expect(second.idempotentReplay).toBe(false);
  expect(tools.count('/limited')).toBe(2);
}, 8_000);

test('a Retry-After within max_backoff_ms is still waited, and the retry answers', async () => {
  refusals = 1;
  const started = Date.now();
  const result = await call('status_soon', 'ra-soon');
  expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  expect(result.isError).toBe(false);
  expect(result.attempts).toBe(2);
  expect(result.warnings).toEqual([]);
}, 8_000);

test("a Retry-After within a larger max_backoff_ms but past the request's deadline is not waited either, as before", async () => {
  const started = Date.now();
  const result = await call('status_patient', 'ra-patient', 3_000);
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(result.attempts).toBe(1);
  expect(result.error).toMatchObject({ recoverable: true, retryAfterMs: 30_000 });
  expect(result.warnings).toEqual(["not retried: waiting 30000 ms to retry would pass the request's deadline"]);
}, 8_000);
