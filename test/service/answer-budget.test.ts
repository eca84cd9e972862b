import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DEFAULT_LIMITS, resolveLimits } from '../../src/options';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// limits.max_answer_bytes_in_flight bounds the bytes of HTTP tools' answers read at once on a
// replica: a call whose next chunk would pass it waits for room, until its own deadline.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({
    // Starts first, holds 900 of the 1,000 bytes for 1.5 s.
    '/slow': async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('s'.repeat(900));
      await sleep(1500);
      res.end();
    },
    '/fast': async (_req, res) => {
      await sleep(200);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('f'.repeat(800));
    },
  });
  const tool = (name: string, timeoutMs: number) =>
    `  - { name: ${name}, effect: read_only, concurrency_safe: true, timeout_ms: ${timeoutMs}, retry: { max_attempts: 1 }, memoize_ttl_seconds: 0, http: { url: "${tools.url}/${name.replace(/_.*/, '')}" } }\n`;
  d = await startApp(`limits: { max_answer_bytes_in_flight: 1000 }\ntools:\n${tool('slow', 10_000)}${tool('fast', 10_000)}${tool('fast_short', 700)}`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('an answer that would pass the budget waits for the answer being read, then is read whole', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'budget', mode: DispatchMode.PARALLEL, calls: [{ id: 's', name: 'slow', arguments: '{}' }, { id: 'f', name: 'fast', arguments: '{}' }] });
  expect(results.map((r) => [r.isError, r.output])).toEqual([
    [false, 's'.repeat(900)],
    [false, 'f'.repeat(800)],
  ]);
});

test('the wait ends at the call\'s own deadline (its timeout)', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'budget-timeout', mode: DispatchMode.PARALLEL, calls: [{ id: 's', name: 'slow', arguments: '{}' }, { id: 'f', name: 'fast_short', arguments: '{}' }] });
  expect(results[0]!.output).toBe('s'.repeat(900));
  expect(results[1]!.error?.kind).toBe(ErrorKind.TIMEOUT);
});

test('the default is 64 MiB, set under limits: as max_answer_bytes_in_flight', () => {
  expect(DEFAULT_LIMITS.maxAnswerBytesInFlight).toBe(64 * 1024 * 1024);
  expect(() => resolveLimits({ maxAnswerBytesInFlight: 0 })).toThrow('limits.maxAnswerBytesInFlight');
});
