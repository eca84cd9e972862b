import dns from 'node:dns';
import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createHttpExecutor } from '../../src/executors';
import { startBlackhole, type Blackhole } from '../helpers/blackhole';
import { closedPort, json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A side-effecting HTTP call whose request never reached a connected socket cannot have run,
// whatever the error or however long the wait: it is a failure BEFORE execution (retried, its
// claim released), not "may have run" with every identical re-call refused OUTCOME_UNKNOWN for
// an hour. Against a loopback port whose connects hang, and a name whose lookup fails EAI_FAIL.

const SERVFAIL_HOST = 'tool.servfail.test';
// undici's connect timeout, past the tools' 500 ms: the connects begun to the blackhole end by then.
const CONNECT_TIMEOUT_MS = 1500;
const realLookup = dns.lookup;
let hole: Blackhole;
let slow: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  // getaddrinfo's answer to a SERVFAIL, for one name only (no DNS traffic): not in the code list.
  dns.lookup = ((host: string, options: unknown, callback: unknown) => {
    const done = (typeof options === 'function' ? options : callback) as (error: NodeJS.ErrnoException) => void;
    if (host !== SERVFAIL_HOST) return (realLookup as (...args: unknown[]) => void)(host, options, callback);
    process.nextTick(done, Object.assign(new Error(`getaddrinfo EAI_FAIL ${host}`), { code: 'EAI_FAIL', syscall: 'getaddrinfo', hostname: host }));
  }) as typeof dns.lookup;
  hole = await startBlackhole();
  slow = await startToolServer({ '/slow': json({ late: true }, 2000) });
  const tool = (name: string, url: string, timeoutMs = 500) => `
  - name: ${name}
    effect: side_effect
    timeout_ms: ${timeoutMs}
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "${url}" }`;
  d = await startDispatch(`tools:${tool('send_hang', `http://127.0.0.1:${hole.port}/send`)}${tool('send_dns', `http://${SERVFAIL_HOST}:${await closedPort()}/send`, 5000)}${tool('send_slow', `${slow.url}/slow`, 300)}\n`, {
    executors: new Map([['http', createHttpExecutor({ transport: { connectTimeoutMs: CONNECT_TIMEOUT_MS } })]]),
  });
});
afterAll(async () => {
  dns.lookup = realLookup;
  await d.close();
  await new Promise((resolve) => setTimeout(resolve, CONNECT_TIMEOUT_MS));
  await hole.close();
  await slow.close();
});

const call = (sessionId: string, name: string, deadlineMs?: number) => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name, arguments: '{"to":"x"}' }] }, deadlineMs === undefined ? {} : { deadlineMs }).then((r) => r.results[0]!);
const suggestion = (output: string) => (JSON.parse(output) as { suggestion?: string }).suggestion ?? '';

test('a connect that hangs until the tool timeout sent nothing: UNAVAILABLE before, retried, and the re-call runs again', async () => {
  const first = await call('hang', 'send_hang');
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(first.error?.message).toBe('could not reach the tool within 500 ms; nothing was sent to it');
  expect(first.error?.recoverable).toBe(true);
  expect(first.attempts).toBe(2);
  expect(suggestion(first.output)).toMatch(/^The tool could not be reached; it is safe to call again/);
  const again = await call('hang', 'send_hang');
  expect(again.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(again.attempts).toBe(2);
});

test("a call cut by the caller's deadline while connecting leaves no unknown outcome behind", async () => {
  await expect(call('cut', 'send_hang', 300)).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
  const again = await call('cut', 'send_hang');
  expect(again.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(again.attempts).toBe(2);
});

test('a DNS failure outside the known codes (EAI_FAIL) sent nothing: UNAVAILABLE before, retried, and the re-call runs again', async () => {
  const first = await call('dns', 'send_dns');
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(first.error?.message).toMatch(/^could not reach the tool at http:\/\/tool\.servfail\.test:\d+\/send \(EAI_FAIL\)$/);
  expect(first.attempts).toBe(2);
  const again = await call('dns', 'send_dns');
  expect(again.error?.kind).toBe(ErrorKind.UNAVAILABLE);
});

test('a request that reached the tool and timed out may have run: OUTCOME_UNKNOWN on the re-call, in words that fit any failure mid-flight', async () => {
  const first = await call('slow', 'send_slow');
  expect(first.error?.kind).toBe(ErrorKind.TIMEOUT);
  expect(first.error?.message).toBe('the tool did not answer within 300 ms');
  expect(first.attempts).toBe(1);
  expect(suggestion(first.output)).toMatch(/may or may not have taken effect/);
  const again = await call('slow', 'send_slow');
  expect(again.error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  expect(again.error?.message).toBe('an identical earlier call was cut off while the tool ran (a timeout, a lost connection or a lost worker), so its effect is unknown; this one was not executed');
  expect(slow.count('/slow')).toBe(1);
});
