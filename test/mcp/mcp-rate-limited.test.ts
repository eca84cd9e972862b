import { createServer, type Server } from 'node:http';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../../src/errors';
import type { McpConnection } from '../../src/executors/mcp';
import { decideRetry } from '../../src/pipeline/retry-policy';
import { connectHttp, lostLogger } from './mcp-harness';

// A Streamable HTTP MCP server that answers a call HTTP 429 refused it before running it, as an
// HTTP tool's 429 does: recoverable, BEFORE, retried after its Retry-After. It was UNAVAILABLE,
// not recoverable, Retry-After unread: never retried. A 408 (the server gave up waiting for the
// request) is transient too. A real HTTP server on loopback, speaking MCP with JSON answers.

jest.setTimeout(30_000);

/** Answers to calls of `slow`, held until the test releases them (or 8 s have passed). */
const heldSlow: (() => void)[] = [];
const releaseSlow = () => heldSlow.splice(0).forEach((answer) => answer());

/** Answers initialize and tools/list; a call to tool `status_<code>` gets that HTTP status, `slow` its answer once released (or after 8 s). */
function startServer(): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: number; method: string; params: { name?: string; protocolVersion?: string } };
      if (message.id === undefined) return void res.writeHead(202).end();
      const reply = (result: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'initialize') return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'limited', version: '1' } });
      if (message.method === 'tools/list') return reply({ tools: ['status_429', 'status_408', 'status_413', 'echo', 'slow'].map((name) => ({ name, inputSchema: { type: 'object' } })) });
      const status = /^status_(\d+)$/.exec(message.params.name ?? '');
      if (status) return void res.writeHead(Number(status[1]), { 'retry-after': '2', 'content-type': 'text/plain' }).end('slow down');
      if (message.params.name === 'slow') {
        const answer = () => {
          clearTimeout(timer);
          if (!res.headersSent) reply({ content: [{ type: 'text', text: 'done' }] });
        };
        const timer = setTimeout(answer, 8_000);
        return void heldSlow.push(answer);
      }
      reply({ content: [{ type: 'text', text: 'echoed' }] });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const { lost, logger } = lostLogger();
let c: McpConnection;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ connection: c, close } = await connectHttp(await startServer(), 'limited', logger));
});
afterAll(() => close());

const call = (tool: string, ms = 5_000) => c.call(tool, {}, { signal: new AbortController().signal, deadline: Date.now() + ms });
const failure = (tool: string) => call(tool).then(() => undefined, (error: unknown) => error as DispatchError);
const policy = { maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 5_000, multiplier: 2, jitter: 0 };

test('HTTP 429: recoverable, before the tool ran, retried after Retry-After, the connection kept', async () => {
  const error = await failure('status_429');
  expect(error).toBeInstanceOf(DispatchError);
  expect(error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, phase: 'before', recoverable: true, httpStatus: 429, retryAfterMs: 2_000 });
  expect(error!.message).toBe('MCP server "limited" answered HTTP 429 (too many requests); the call was not executed');
  // Even a side-effecting tool's call is retried: nothing ran.
  expect(decideRetry({ error: error!, readOnly: false, attempt: 1, policy })).toMatchObject({ retry: true, delayMs: 2_000 });
  // A Retry-After past the tool's max_backoff_ms is not waited: the model is told when to call again.
  expect(decideRetry({ error: error!, readOnly: false, attempt: 1, policy: { ...policy, maxBackoffMs: 1_000 } })).toMatchObject({ retry: false });
  expect(error!.suggestion).toBe('The tool is busy and asked to be called again in 2 s (retry_after_ms); call it again then or later, unchanged, or use another tool meanwhile.');
  expect(c.connected()).toBe(true);
  expect(await call('echo')).toMatchObject({ content: [{ text: 'echoed' }] });
});

test('HTTP 408: transient, and the tool may have run: a read-only call is retried, a side-effecting one is not', async () => {
  const error = await failure('status_408');
  expect(error).toMatchObject({ kind: ErrorKind.UNAVAILABLE, phase: 'during', recoverable: true, httpStatus: 408 });
  expect(decideRetry({ error: error!, readOnly: true, attempt: 1, policy })).toMatchObject({ retry: true });
  // A proxy's 408 may come after the server ran the call: a charge must not run twice (found in review of 008a3ab).
  expect(decideRetry({ error: error!, readOnly: false, attempt: 1, policy })).toMatchObject({ retry: false });
  expect(c.connected()).toBe(true);
});

// A call whose request the transport fails to send (a POST answered 429, 413, 401, ...: the
// connection stays) leaves nothing behind on the client. The SDK's Protocol.request removes only
// the request's timeout when `send` rejects, never its response handler: each such call kept one
// in the client for as long as the connection lived, so a server rate-limiting a busy replica grew
// its heap without end.
test('calls refused HTTP 429 or 413 leave no response handler on the client, and the connection still answers', async () => {
  for (let i = 0; i < 100; i++) {
    await expect(call(i % 2 === 0 ? 'status_429' : 'status_413')).rejects.toThrow(/HTTP (429|413)/);
  }
  expect(c.connected()).toBe(true);
  expect(c.diagnostics()).toMatchObject({ pendingResponses: 0, progressHandlers: 0, timeouts: 0 });
  expect(await call('echo')).toMatchObject({ content: [{ text: 'echoed' }] });
  expect(c.diagnostics()).toMatchObject({ pendingResponses: 0 });
});

// The SDK reports each failed POST to the transport's onerror as well as to the call;
// mcp-request-guard counted those as lines that are no message (100 a second, burst 1,000), so
// past 1,000 refusals it dropped the connection as abusive: every call in flight on it failed
// "lost mid-request" (DURING: a side-effecting one OUTCOME_UNKNOWN, never retried).
test('3,000 calls refused HTTP 429 leave the connection up, and a call running beside them is answered', async () => {
  const slow = call('slow', 15_000);
  let refused = 0;
  for (let batch = 0; batch < 30; batch++) {
    const outcomes = await Promise.allSettled(Array.from({ length: 100 }, () => call('status_429')));
    refused += outcomes.filter((o) => o.status === 'rejected' && /HTTP 429/.test((o.reason as Error).message)).length;
  }
  expect(lost).toEqual([]);
  expect(refused).toBe(3_000);
  // Answered only now, once every refusal is in: in flight all along them.
  releaseSlow();
  await expect(slow).resolves.toMatchObject({ content: [{ text: 'done' }] });
  expect(c.connected()).toBe(true);
});
