import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A side-effecting HTTP tool that answers 429 did not run (a rate limiter refused the request):
// the call is retried after Retry-After, and an identical re-call runs instead of replaying the
// 429 for the idempotency record's whole TTL. A 500 ran and failed: it is replayed, not retried.

let tools: ToolServer;
let d: TestDispatch;
let limited = 0;

beforeAll(async () => {
  tools = await startToolServer({
    // Refuses the first `limited` requests, then sends.
    '/send': (_req, res) => {
      if (limited > 0) {
        limited--;
        res.writeHead(429, { 'retry-after': '1' }).end('slow down');
      } else res.writeHead(200).end('sent');
    },
    '/broken': (_req, res) => void res.writeHead(500).end('boom'),
    '/busy': (_req, res) => void res.writeHead(429, { 'retry-after': '60' }).end('come back in a minute'),
  });
  d = await startDispatch(`
tools:
  - name: send
    effect: side_effect
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "${tools.url}/send" }
  - name: busy
    effect: side_effect
    input_schema: '{"type":"object"}'
    retry: { max_backoff_ms: 120000 }
    http: { url: "${tools.url}/busy" }
  - name: broken
    effect: side_effect
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "${tools.url}/broken" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, session: string) => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: '{"to":"a@b.c"}' }] }).then((r) => r.results[0]!);

test('a 429 is retried after its Retry-After, and the retry sends', async () => {
  limited = 1;
  const started = Date.now();
  const result = await call('send', 'rl-retry');
  expect(result.isError).toBe(false);
  expect(result.output).toBe('sent');
  expect(result.attempts).toBe(2);
  expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  expect(tools.count('/send')).toBe(2);
});

test('a call refused 429 on every attempt is not replayed: an identical re-call runs', async () => {
  limited = 2;
  const first = await call('send', 'rl-recall');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.recoverable).toBe(true);
  expect(first.error?.retryAfterMs).toBe(1000);
  expect(first.attempts).toBe(2);
  const before = tools.count('/send');
  const second = await call('send', 'rl-recall');
  expect(second.idempotentReplay).toBe(false);
  expect(second.output).toBe('sent');
  expect(tools.count('/send')).toBe(before + 1);
  // Sent once: now it is replayed.
  const third = await call('send', 'rl-recall');
  expect(third.idempotentReplay).toBe(true);
  expect(tools.count('/send')).toBe(before + 1);
});

test('a 500 ran: it is neither retried nor run again on a re-call, but replayed', async () => {
  const first = await call('broken', 'rl-500');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.attempts).toBe(1);
  const second = await call('broken', 'rl-500');
  expect(second.idempotentReplay).toBe(true);
  expect(tools.count('/broken')).toBe(1);
});

test('a Retry-After that would end past the request deadline is not waited for: the turn keeps its results, the call its soft error', async () => {
  const before = tools.count('/send');
  const started = Date.now();
  const { results } = await d.dispatch.dispatch(
    { sessionId: 'rl-deadline', calls: [{ id: 's', name: 'send', arguments: '{"to":"x@y.z"}' }, { id: 'b', name: 'busy', arguments: '{}' }] },
    { deadlineMs: 5_000 },
  );
  expect(Date.now() - started).toBeLessThan(3_000);
  expect(results[0]!.output).toBe('sent');
  expect(tools.count('/send')).toBe(before + 1);
  expect(results[1]!.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(results[1]!.error?.retryAfterMs).toBe(60_000);
  expect(results[1]!.attempts).toBe(1);
  expect(results[1]!.warnings).toEqual(["not retried: waiting 60000 ms to retry would pass the request's deadline"]);
});
