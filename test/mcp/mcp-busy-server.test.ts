import * as path from 'node:path';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { startApp } from '../helpers/servers';

// A stdio MCP server that serves one request at a time (as many simple servers do) cannot answer
// a ping while it works on a long call. It was pinged after any aborted call (a client's cancel
// or deadline included), dropped when the ping went unanswered, and every other call in flight
// on it (another session's, which it had not even read) failed as lost mid-request. Now a ping
// follows the tool's own timeout, or a call its client abandoned that is still unanswered (with
// no response at all) when the tool's timeout has passed since it was sent; a response (not a
// notification) since the ping proves the server alive, and a server is dropped only once the
// calls in flight have passed their own deadlines with no response from it. A real stdio server process (fixtures/sequential-server.js); its
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
  // Busy 2 s: a ping sent at the abort (300 ms) would have gone unanswered past its 300 ms by ~600 ms.
  const slow = call('a', '{"ms":2000,"n":"a"}', { signal: controller.signal, deadlineMs: a.deadlineMs }).catch((error: Error) => error);
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
  // Timed out at 300 ms; the ping after it waits behind the call until ~2 s, past its 300 ms.
  const slow = timedOutCall(c, 'work', { ms: 2_000 }, 300);
  await sleep(100);
  const other = await callWithin(c, { ms: 100, n: 'b' }, 10_000);
  expect(c.connected()).toBe(true);
  expect(pidOf(textOf(other))).toBe(first);
  expect(await slow).toBeInstanceOf(Error);
  expect(c.connected()).toBe(true);
});

test('a server stuck on a call that only sends notifications is dropped: notifications prove nothing', async () => {
  const c = await connect();
  const first = pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)));
  const started = Date.now();
  // `note` sends a notification every 100 ms and answers nothing for 20 s; the ping after the
  // timeout (at 300 ms) waits behind it and fails at ~600 ms.
  expect(await timedOutCall(c, 'note', { ms: 20_000 }, 300)).toBeInstanceOf(Error);
  while (c.connected() && Date.now() - started < 3_000) await sleep(10);
  expect(c.connected()).toBe(false);
  const end = Date.now() + 10_000;
  while (!c.connected() && Date.now() < end) await sleep(50);
  expect(pidOf(textOf(await callWithin(c, { ms: 0 }, 5_000)))).not.toBe(first);
});

test('a hung server is pinged and replaced though every client gives up before the tool\'s timeout', async () => {
  // timeout_ms 1 s, every client's deadline 400 ms: no call reaches the tool's own timeout, but the
  // first (unanswered) is watched and the server, answering nothing, is pinged at ~1 s and dropped.
  t = await startApp(`mcp_servers:\n  - ${JSON.stringify({ ...serverEntry, timeout_ms: 1_000 })}\n`);
  const app = t;
  /** The call's output, or its failure (the gRPC deadline, an error result) as undefined. */
  let n = 0;
  const call = async (args: string) => {
    const result = await app.dispatch.dispatch({ sessionId: `s${++n}`, calls: [{ id: `c${n}`, name: 'q_work', arguments: args }] }, { deadlineMs: 400 }).then((r) => r.results[0]!, () => undefined);
    return result && result.error === undefined ? result.output : undefined;
  };
  const first = await call('{"ms":0}');
  expect(first).toBeDefined();
  const started = Date.now();
  expect(await call('{"ms":600000}')).toBeUndefined();
  let next = await call('{"ms":0}');
  for (let i = 0; i < 40 && (next === undefined || pidOf(next) === pidOf(first!)) && Date.now() - started < 10_000; i++) {
    await sleep(100);
    next = await call('{"ms":0}');
  }
  expect(next).toBeDefined();
  expect(pidOf(next!)).not.toBe(pidOf(first!));
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
