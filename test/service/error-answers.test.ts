import type { ServerResponse } from 'node:http';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A non-2xx answer is classified by its status; its body only explains it. Only its start is read
// (4 KiB, at most 1 s), so a 429 whose body drips stays a refusal to run (not the tool's timeout,
// "may have run" for a side-effecting tool), and a 404 with an endless body stays a 404 (not
// UNEXPECTED for an answer past the read cap, counted against the breaker). Real loopback server.

let tools: ToolServer;
let d: TestDispatch;
const closed: Record<string, boolean> = {};

/** Writes 64 KiB chunks of `b` until the client goes. */
function pump(res: ServerResponse): void {
  const chunk = Buffer.alloc(65_536, 0x62);
  const more = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', more);
  };
  more();
}

beforeAll(async () => {
  tools = await startToolServer({
    '/limited': (req, res) => {
      res.on('close', () => (closed[req.path] = true));
      res.writeHead(429, { 'retry-after': '1' }).write('rate limited');
      const drip = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(drip));
    },
    '/missing': (req, res) => {
      res.on('close', () => (closed[req.path] = true));
      res.writeHead(404);
      pump(res);
    },
  });
  d = await startDispatch(`
tools:
  - name: send
    effect: side_effect
    timeout_ms: 4000
    input_schema: '{"type":"object"}'
    retry: { max_attempts: 1 }
    http: { url: "${tools.url}/limited" }
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/missing" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string, session: string) => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: '{"to":"x"}' }] }).then((r) => r.results[0]!);

test('a 429 whose body never ends is a 429 within about a second: no timeout, and an identical re-call runs', async () => {
  const started = Date.now();
  const first = await call('send', 'drip');
  expect(Date.now() - started).toBeLessThan(2500);
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.message).toMatch(/^the tool answered HTTP 429: rate limited\.*$/);
  expect(first.error?.retryAfterMs).toBe(1000);
  expect(closed['/limited']).toBe(true);
  const again = await call('send', 'drip');
  expect(again.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(tools.count('/limited')).toBe(2);
});

test('a 404 with an endless body is a 404: the body is cut after its first bytes and the connection closed', async () => {
  const result = await call('lookup', 'big');
  expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(result.error?.message).toBe(`the tool answered HTTP 404: ${'b'.repeat(500)}...`);
  expect(result.attempts).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(closed['/missing']).toBe(true);
});
