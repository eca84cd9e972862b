import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { parseRetryAfter } from '../../src/executors/http-errors';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A tool behind a proxy that adds its own Retry-After answers two of them, which undici joins:
// "30, 30". That is no number, and V8's Date.parse reads "30, 30" (as "5,5", "1 2", "in 5") as a
// date in 2001: the wait became 0, so a 503 asking for 30 s was retried at once and the model was
// told nothing of the wait. Duplicates are read as the longest wait they ask; only a text that
// looks like an HTTP date is read as one. Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/busy': (_req, res) => void res.setHeader('retry-after', ['30', '30']).writeHead(503).end('busy') });
  d = await startDispatch(`tools:\n  - { name: status, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/busy" } }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test('a 503 with Retry-After sent twice is not retried at once, and the model is told the wait', async () => {
  const result = (await d.dispatch.dispatch({ sessionId: 'dup', calls: [{ id: 'c', name: 'status', arguments: '{}' }] })).results[0]!;
  expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(result.error?.retryAfterMs).toBe(30_000);
  expect(result.attempts).toBe(1);
  expect(tools.count('/busy')).toBe(1);
});

test.each([
  ['5, 5', 5000],
  ['5, 7', 7000],
  ['1 2', undefined],
  ['in 5', undefined],
  ['soon', undefined],
])('Retry-After %j is read as %p ms', (header, ms) => {
  expect(parseRetryAfter(header)).toBe(ms);
});

test('an HTTP date is still read as one', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
  expect(parseRetryAfter('Wednesday, 21-Oct-15 07:28:30 GMT', now)).toBe(30_000);
});
