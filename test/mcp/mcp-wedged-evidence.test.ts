import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import type { Logger } from '../../src/log';
import { startHttpMcp, STDIO_SERVER, type HttpMcp } from './mcp-harness';

// What must not have a healthy server replaced, with real servers (the SDK's, stdio and
// Streamable HTTP) that serve calls well. A first try at replacing a "wedged" server (one that
// answers pings while a hung call holds every other) did all three; it was taken out, and a
// server answering pings is kept (see mcp-liveness.ts):
// - calls abandoned by their clients (cancel, a client deadline): the SDK's client sends
//   notifications/cancelled and the SDK's server never answers such a call. Three of them in a
//   row had the server replaced (every call running on it failed);
// - calls of one slow tool timing out together (one burst): each counted, so three sessions
//   calling it at once had a server replaced that answered every other call;
// - a call sent after a drop was decided, within its deadline: the drop waited only for the calls
//   in flight when it was decided, and cut it (lost mid-request) though the server answered it.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content[0]!.text);
const pidOf = (result: unknown) => (JSON.parse(textOf(result)) as { pid: number }).pid;

let connection: McpConnection | undefined;
let http: HttpMcp | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  await http?.kill();
  http = undefined;
});

/** The reasons the connection was dropped for, as logged. */
let drops: string[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, fields: Record<string, unknown> = {}) => void (message.startsWith('mcp server connection lost') && drops.push(String(fields.reason))),
  error: () => undefined,
};

async function connect(entry: { command: string[] } | { url: string }): Promise<McpConnection> {
  drops = [];
  const config = parseMcpServers([{ name: 'e', ...entry, ping_timeout_ms: 1_000, reconnect_initial_ms: 100, reconnect_max_ms: 400 }], 'test.yaml')[0]!;
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

const callWithin = (c: McpConnection, tool: string, args: Record<string, unknown>, ms: number) => c.call(tool, args, { signal: new AbortController().signal, deadline: Date.now() + ms, timeoutMs: ms, timedOut: () => false });

test('a healthy server whose clients cancel three slow calls in a row is kept', async () => {
  const c = await connect({ command: [process.execPath, STDIO_SERVER] });
  const first = pidOf(await callWithin(c, 'echo', { text: 'a' }, 5_000));
  for (let i = 0; i < 3; i++) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 100);
    const cancelled = await c.call('slow', { ms: 600_000 }, { signal: controller.signal, deadline: Date.now() + 400, timedOut: () => false, timeoutMs: 400 }).catch((error: Error) => error);
    expect(cancelled).toBeInstanceOf(Error);
    await sleep(500); // past the tool's timeout since it was sent: the server was pinged
  }
  await sleep(300);
  expect(drops).toEqual([]);
  expect(pidOf(await callWithin(c, 'echo', { text: 'b' }, 5_000))).toBe(first);
  // Their watches ended with the pings answered.
  expect(c.diagnostics()).toMatchObject({ livenessWatches: 0 });
});

test('three calls of one slow tool timing out together (one burst) do not replace a server answering other calls', async () => {
  const c = await connect({ command: [process.execPath, STDIO_SERVER] });
  const first = pidOf(await callWithin(c, 'echo', { text: 'a' }, 5_000));
  // Sent together, timing out one after another (each a ping answered between): overlapping windows.
  const burst = await Promise.all([400, 500, 600].map((ms) => timedOutCall(c, 'slow', { ms: 600_000 }, ms)));
  for (const failure of burst) expect(failure).toBeInstanceOf(Error);
  await sleep(300);
  expect(drops).toEqual([]);
  expect(pidOf(await callWithin(c, 'echo', { text: 'b' }, 5_000))).toBe(first);
});

test('(HTTP) four timeouts in a row, then a call sent while another is in flight: answered, not cut, and the server kept', async () => {
  http = await startHttpMcp();
  const c = await connect({ url: http.url });
  await callWithin(c, 'echo', { text: 'a' }, 5_000);
  // Four timeouts in a row, each sent after the last timed out, nothing answered between (the
  // pattern the wedged-server detection took for a hung server).
  for (let i = 0; i < 3; i++) expect(await timedOutCall(c, 'slow', { ms: 600_000 }, 300)).toBeInstanceOf(Error);
  const fourth = timedOutCall(c, 'slow', { ms: 600_000 }, 300);
  // In flight meanwhile (a drop would have waited for it, to 1,200 ms).
  const inFlight = timedOutCall(c, 'slow', { ms: 600_000 }, 1_200);
  expect(await fourth).toBeInstanceOf(Error);
  await sleep(150);
  // Sent after, answered at ~1,500 ms, past the call in flight's deadline.
  const answer = await callWithin(c, 'slow', { ms: 1_100 }, 5_000).then(textOf, (error: Error) => `failed: ${error.message}`);
  expect(answer).toBe('slept 1100');
  expect(await inFlight).toBeInstanceOf(Error);
  expect(drops).toEqual([]);
  expect(c.connected()).toBe(true);
});
