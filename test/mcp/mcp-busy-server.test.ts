import * as path from 'node:path';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { startApp } from '../helpers/servers';

// A stdio MCP server that serves one request at a time (as many simple servers do) cannot answer
// a ping while it works on a long call. It was pinged after any aborted call (a client's cancel
// or deadline included), dropped when the ping went unanswered, and every other call in flight
// on it (another session's, which it had not even read) failed as lost mid-request. Now only the
// tool's own timeout is followed by a ping, any message from the server since the ping proves it
// alive, and a server is dropped only once the calls in flight have passed their own deadlines
// with nothing heard from it. A real stdio server process (fixtures/sequential-server.js); its
// long calls outlast a dropped client's close (stdin closed, SIGTERM 2 s later).

jest.setTimeout(30_000);

const SERVER = path.join(__dirname, 'fixtures/sequential-server.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pidOf = (output: string) => (JSON.parse(output) as { pid: number }).pid;
const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0]!.text;

type AppT = Awaited<ReturnType<typeof startApp>>;
let t: AppT | undefined;
let connection: McpConnection | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await connection?.close();
  connection = undefined;
});

const serverEntry = { name: 'q', command: [process.execPath, SERVER], ping_timeout_ms: 300, reconnect_initial_ms: 100, reconnect_max_ms: 400 };

test.each<[string, { cancelAfterMs?: number; deadlineMs?: number }]>([
  ['cancels', { cancelAfterMs: 300 }],
  ['lets its deadline pass', { deadlineMs: 300 }],
])("a call whose client %s is followed by no ping: another session's call on the busy server succeeds", async (_, a) => {
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify({ ...serverEntry, timeout_ms: 20_000 })}\n`);
  const app = t;
  const call = (session: string, args: string, options: { signal?: AbortSignal; deadlineMs?: number } = {}) => app.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name: 'q_work', arguments: args }] }, options);
  const first = (await call('warm', '{"ms":0,"n":"w"}')).results[0]!;
  expect(first.isError).toBe(false);

  const controller = new AbortController();
  if (a.cancelAfterMs) setTimeout(() => controller.abort(), a.cancelAfterMs);
  const slow = call('a', '{"ms":4000,"n":"a"}', { signal: controller.signal, deadlineMs: a.deadlineMs }).catch((error: Error) => error);
  await sleep(100);
  const other = (await call('b', '{"ms":100,"n":"b"}', { deadlineMs: 20_000 })).results[0]!;
  expect(other.error).toBeUndefined();
  expect(pidOf(other.output)).toBe(pidOf(first.output));
  await slow;
});

/** A connection to the sequential server, connected. */
async function connect(): Promise<McpConnection> {
  const config = parseMcpServers([serverEntry], 'test.yaml')[0]!;
  const c = (connection = createMcpConnection(config, { logger: SILENT_LOGGER, onTools: () => undefined }));
  await c.start();
  expect(c.connected()).toBe(true);
  return c;
}

/** A call the tool's own timeout aborts after `ms`. */
function timedOutCall(c: McpConnection, tool: string, args: Record<string, unknown>, ms: number): Promise<unknown> {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error(`timed out after ${ms} ms`)), ms);
  return c.call(tool, args, { signal: controller.signal, deadline: Date.now() + ms, timedOut: () => controller.signal.aborted }).catch((error: Error) => error);
}

const callWithin = (c: McpConnection, args: Record<string, unknown>, ms: number) => c.call('work', args, { signal: new AbortController().signal, deadline: Date.now() + ms });

test('a server busy past a ping is not dropped while another call on it is within its deadline', async () => {
  const c = await connect();
  const first = pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)));
  // Timed out at 300 ms; the ping after it waits behind the call until ~4 s, past its 300 ms.
  const slow = timedOutCall(c, 'work', { ms: 4_000 }, 300);
  await sleep(100);
  const other = await callWithin(c, { ms: 100, n: 'b' }, 10_000);
  expect(c.connected()).toBe(true);
  expect(pidOf(textOf(other))).toBe(first);
  expect(await slow).toBeInstanceOf(Error);
  expect(c.connected()).toBe(true);
});

test('a server that sends notifications while it works is alive though its ping waits', async () => {
  const c = await connect();
  const first = pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)));
  expect(await timedOutCall(c, 'note', { ms: 1_500 }, 300)).toBeInstanceOf(Error);
  // The ping went unanswered at ~600 ms; notifications came meanwhile.
  await sleep(700);
  expect(c.connected()).toBe(true);
  expect(pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)))).toBe(first);
});

test('a server heard from not at all until the calls in flight pass their deadlines is dropped then', async () => {
  const c = await connect();
  const first = pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)));
  const started = Date.now();
  const stuck = timedOutCall(c, 'work', { ms: 20_000 }, 300);
  // In flight until 1.5 s: the ping fails at ~600 ms, the drop waits for this call's deadline.
  const other = callWithin(c, { ms: 0 }, 1_500).catch((error: Error) => error);
  await sleep(1_000);
  expect(c.connected()).toBe(true);
  while (c.connected() && Date.now() - started < 2_300) await sleep(10);
  expect(c.connected()).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  expect(await other).toBeInstanceOf(Error);
  expect(await stuck).toBeInstanceOf(Error);
  const end = Date.now() + 10_000;
  while (!c.connected() && Date.now() < end) await sleep(50);
  expect(pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)))).not.toBe(first);
});
