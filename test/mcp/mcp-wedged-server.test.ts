import * as path from 'node:path';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import type { Logger } from '../../src/log';
import { STDIO_SERVER } from './mcp-harness';

// A server that answers pings but no calls: its tool calls run one at a time behind a lock, and
// one call hangs inside it forever, ignoring the cancel dispatch sends (notifications/cancelled).
// Every later call queued behind it and timed out; each timeout was followed by a ping the
// server answered at once, so it was never replaced: the server was unusable until someone
// restarted dispatch. Now calls that reach the tool's own timeout with no call answered by the
// server meanwhile, each sent after the last timed out (WEDGED_AFTER of them, then one more), make
// it count as wedged though it answers pings: it is dropped (once the calls in flight pass their
// deadlines) and started again. A server that still answers other calls is kept. Calls its
// clients abandon first (cancel, a client deadline) are no evidence (the SDK's server never
// answers a cancelled call, however well it is): if clients always give up before the tool's
// timeout, no call ever reaches it and a wedged server is not replaced by those cancels alone.
// Real server processes (fixtures/locked-server.js, stdio-server.js).

jest.setTimeout(30_000);

const LOCKED = path.join(__dirname, 'fixtures/locked-server.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content[0]!.text);
const pidOf = (result: unknown) => (JSON.parse(textOf(result)) as { pid: number }).pid;

/** The reasons the connection was dropped for, as logged. */
let drops: string[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, fields: Record<string, unknown> = {}) => void (message.startsWith('mcp server connection lost') && drops.push(String(fields.reason))),
  error: () => undefined,
};

let connection: McpConnection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
});

async function connect(command: string[]): Promise<McpConnection> {
  const config = parseMcpServers([{ name: 'w', command, ping_timeout_ms: 1_000, reconnect_initial_ms: 100, reconnect_max_ms: 400 }], 'test.yaml')[0]!;
  drops = [];
  const c = (connection = createMcpConnection(config, { logger, onTools: () => undefined }));
  await c.start();
  expect(c.connected()).toBe(true);
  return c;
}

/** A call the tool's own timeout aborts after `ms`; its failure as the result. */
function timedOutCall(c: McpConnection, tool: string, args: Record<string, unknown>, ms: number): Promise<unknown> {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error(`timed out after ${ms} ms`)), ms);
  return c.call(tool, args, { signal: controller.signal, deadline: Date.now() + ms, timedOut: () => controller.signal.aborted, timeoutMs: ms }).catch((error: Error) => error);
}

/** A call its client abandons after `cancelMs`, the tool's timeout being `timeoutMs`. */
function abandonedCall(c: McpConnection, tool: string, args: Record<string, unknown>, cancelMs: number, timeoutMs: number): Promise<unknown> {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('cancelled')), cancelMs);
  return c.call(tool, args, { signal: controller.signal, deadline: Date.now() + timeoutMs, timedOut: () => false, timeoutMs }).catch((error: Error) => error);
}

const callWithin = (c: McpConnection, tool: string, args: Record<string, unknown>, ms: number) => c.call(tool, args, { signal: new AbortController().signal, deadline: Date.now() + ms });

/** Calls `work` until one succeeds on a process other than `old` (bounded); its pid, or undefined. */
async function replacedWithin(c: McpConnection, old: number, ms: number, call: () => Promise<unknown>): Promise<number | undefined> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const result = c.connected() ? await call() : undefined;
    if (result !== undefined && !(result instanceof Error) && pidOf(result) !== old) return pidOf(result);
    await sleep(50);
  }
  return undefined;
}

test("a server answering pings but no calls (one hung inside it) is replaced: calls time out by the tool's own timeout", async () => {
  const c = await connect([process.execPath, LOCKED]);
  const first = pidOf(await callWithin(c, 'work', { ms: 0 }, 5_000));
  // Hangs inside the server forever, holding its lock: every later call waits behind it.
  expect(await timedOutCall(c, 'work', { ms: -1 }, 300)).toBeInstanceOf(Error);
  const replaced = await replacedWithin(c, first, 15_000, () => timedOutCall(c, 'work', { ms: 0 }, 300));
  expect(replaced).toBeDefined();
  expect(pidOf(await callWithin(c, 'work', { ms: 0 }, 5_000))).toBe(replaced);
});

test('a server answering pings but no calls is not replaced by calls its clients give up on first (no call reaches the tool timeout)', async () => {
  const c = await connect([process.execPath, LOCKED]);
  await callWithin(c, 'work', { ms: 0 }, 5_000);
  expect(await timedOutCall(c, 'work', { ms: -1 }, 300)).toBeInstanceOf(Error);
  // Each is watched to the tool's timeout (300 ms) and the server pinged: it answers.
  for (let i = 0; i < 6; i++) expect(await abandonedCall(c, 'work', { ms: 0 }, 100, 300)).toBeInstanceOf(Error);
  await sleep(600);
  expect(drops).toEqual([]);
  expect(c.connected()).toBe(true);
});

test('a server with one call hung in it that answers other calls is kept', async () => {
  const c = await connect([process.execPath, STDIO_SERVER]);
  const first = pidOf(await callWithin(c, 'echo', { text: 'a' }, 5_000));
  for (let i = 0; i < 5; i++) {
    // `slow` never answers in time (nor after: the SDK server drops a cancelled request's answer).
    expect(await timedOutCall(c, 'slow', { ms: 600_000 }, 200)).toBeInstanceOf(Error);
    await sleep(100);
    expect(pidOf(await callWithin(c, 'echo', { text: `b${i}` }, 5_000))).toBe(first);
  }
  await sleep(500);
  expect(c.connected()).toBe(true);
  expect(pidOf(await callWithin(c, 'echo', { text: 'c' }, 5_000))).toBe(first);
});
