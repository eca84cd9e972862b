import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createMcpConnection, parseMcpServers, useLineBuffer, type McpConnection } from '../../src/executors/mcp';
import {
  createMessageRate,
  MAX_SERVER_ERROR_BURST,
  MAX_SERVER_ERRORS_PER_SECOND,
  MAX_SERVER_MESSAGE_BURST,
  MAX_SERVER_MESSAGES_PER_SECOND,
  MAX_SERVER_NOTIFICATION_BURST,
  MAX_SERVER_NOTIFICATIONS_PER_SECOND,
  MAX_SERVER_REQUEST_BURST,
  MAX_SERVER_REQUESTS_PER_SECOND,
} from '../../src/executors/mcp/mcp-message-rate';
import { guardRequests, HELD_LIST_CHANGE_MS, SHED_REPORT_MS } from '../../src/executors/mcp/mcp-request-guard';
import { answersRequestInFlight, createRequestsInFlight, GIVEN_UP_MS, MAX_GIVEN_UP_REMEMBERED, MAX_REQUESTS_REMEMBERED } from '../../src/executors/mcp/mcp-requests-in-flight';
import type { Logger } from '../../src/log';
import { cpuMsSince } from '../helpers/cpu-time';
import { isAlive } from './mcp-harness';

// A stdio MCP server (test/mcp/fixtures/chatty-server.js) that sends dispatch requests and
// notifications of its own (ping, roots/list, sampling, elicitation, logs, progress, unknown
// methods) in a tight loop while a call runs, and reads every answer: no bound on answers in
// flight or unread bytes is passed, and dispatch spent ~27 us of CPU on each message without end.
// Then a server busy but compliant (many calls, each logging every few ms), which the first bound
// (1,000 requests and notifications a second, then the connection dropped) dropped too. And
// servers dodging the bounds with answers to ids dispatch never used, or lines that are no message,
// and a server answering many calls fast, whose answers are no errors.
// The figures asserted hold on a machine whose two cores are both kept busy by other processes.

jest.setTimeout(20_000);

const CHATTY = path.join(__dirname, 'fixtures/chatty-server.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Logged {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

function recordingLogger(): Logger & { lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}) => void lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let logFile = '';
const logLines = (): string[] => {
  try {
    return readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const starts = () => logLines().filter((l) => l.startsWith('start '));
const sent = () => logLines().filter((l) => l.startsWith('sent ')).length * 100;

function config(env: Record<string, string> = {}) {
  logFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcp-rate-')), 'log');
  const server = { name: 'chatty', command: [process.execPath, CHATTY], env: { LOG: logFile, ...env }, reconnect_initial_ms: 300, reconnect_max_ms: 300, reconnect_wait_ms: 0 };
  return parseMcpServers([server], 'test.yaml')[0]!;
}

let connection: McpConnection | undefined;
afterEach(async () => {
  await connection?.close();
  connection = undefined;
  for (const line of starts()) {
    const pid = Number(line.split(' ')[1]);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
});

const callCtx = (ms = 10_000) => ({ signal: new AbortController().signal, deadline: Date.now() + ms });

test('a server flooding requests and notifications while a call runs is dropped once past the rate of its requests, its call failing recoverable, and dispatch s CPU is bounded', async () => {
  const logger = recordingLogger();
  // The flood lasts until the server is dropped (or 10 s): it is dropped once dispatch has read its
  // requests past their burst and rate (1,000 more than a second's worth), after ~0.3 s on an idle
  // machine; with many busy loops beside it, the server and dispatch each given a sliver of a core,
  // they are read slower (~1,200-2,000 a second) and it was dropped after 1-4 s, where a flood of
  // 1.5 s was often answered first, the call succeeding.
  connection = createMcpConnection(config({ FLOOD_MS: '10000' }), { logger, onTools: () => undefined });
  await connection.start();
  expect(connection.connected()).toBe(true);
  const cpu = process.cpuUsage();
  const began = Date.now();
  const outcome = await connection.call('flood', {}, callCtx(30_000)).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failedAfter = Date.now() - began;
  const spentToDrop = cpuMsSince(cpu);
  // The same window after the drop whenever it came: the server's next write fails, and it exits;
  // its next start (reconnect_max_ms, 300 ms) is in it.
  await sleep(1_500);
  const spent = cpuMsSince(cpu);
  process.stdout.write(`flood: dropped after ${failedAfter} ms; dispatch CPU ${spent.toFixed(0)} ms over ${Date.now() - began} ms (${(spent - spentToDrop).toFixed(0)} ms after the drop); the server sent ${sent()} messages\n`);
  // Old code: the call succeeded after the flood (10 s), ~1,000 ms of dispatch's CPU a second or more.
  expect(outcome).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  // ~200-300 ms, ~250-400 ms with both cores kept busy by other processes, on the machine this was
  // written on; ~500 ms on a slower one, 741 ms there in a CI run: the bound on the whole is loose,
  // and what shows the flood is no longer read is the CPU after the drop (~10 ms; the server's
  // restart is in it: 237 ms once in a CI run beside three probing sessions, so bounded at 500,
  // still a third of what reading on would take over that 1.5 s).
  expect(spent).toBeLessThan(1_400);
  expect(spent - spentToDrop).toBeLessThan(500);
  const lost = logger.lines.filter((l) => l.message.includes('connection lost'));
  expect(lost).toHaveLength(1);
  expect(String(lost[0]!.fields.reason)).toBe('the MCP server sent more than 1000 requests a second (burst 1000)');
  expect(lost[0]!.fields.server).toBe('chatty');
  // The call lost on it says why (before, "was lost mid-request" alone).
  expect((outcome as Error).message).toBe('the connection to MCP server "chatty" was lost mid-request (the MCP server sent more than 1000 requests a second (burst 1000))');
  // Reconnected with its backoff; a call that does not flood then succeeds.
  expect(await until(() => connection!.connected() && starts().length >= 2, 10_000)).toBe(true);
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
}, 30_000);

test('a server sending pings, progress, log messages and tools/list_changed as a normal one does is never dropped', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config(), { logger, onTools: () => undefined });
  await connection.start();
  const results = await Promise.all([connection.call('chatty', {}, callCtx()), connection.call('chatty', {}, callCtx())]);
  for (const result of results) expect(JSON.stringify(result.content)).toContain('chatted');
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(connection.connected()).toBe(true);
  expect(starts()).toHaveLength(1);
});

test('a busy server (12 calls, each sending 100 bursts of 8 log messages and progress notifications, one every 10 ms) is not dropped: its calls succeed, the notifications past their rate are shed and logged, a tools/list_changed among them is not lost', async () => {
  const logger = recordingLogger();
  const told: string[][] = [];
  const onTools = (tools: unknown[]) => void told.push(tools.map((t) => (t as { name: string }).name));
  connection = createMcpConnection(config(), { logger, onTools });
  await connection.start();
  const began = Date.now();
  const calls = Array.from({ length: 12 }, (_, k) => connection!.call('busy', { bursts: 100, size: 8, every: 10, change: k === 0 }, callCtx(30_000)));
  const results = await Promise.all(calls);
  const took = Date.now() - began;
  // Old code: the connection was dropped after ~0.3 s and every call failed UNAVAILABLE.
  const sentByCall = results.map((result) => Number(/busy (\d+)/.exec(JSON.stringify(result.content))?.[1]));
  expect(sentByCall).toEqual(Array.from({ length: 12 }, () => 800));
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(connection.connected()).toBe(true);
  expect(starts()).toHaveLength(1);
  expect(await until(() => told.some((names) => names.includes('added')), 10_000)).toBe(true);
  // However fast the server's timers fired: of the 9,600 (and the tools/list_changed), all but the
  // burst and the rate over the time the calls took were shed.
  const sentAll = 12 * 800;
  // (10 for the clocks: the bucket's is performance.now.)
  const leastShed = sentAll - MAX_SERVER_NOTIFICATION_BURST - Math.ceil((MAX_SERVER_NOTIFICATIONS_PER_SECOND * took) / 1_000) - 10;
  const shedLines = () => logger.lines.filter((l) => l.message === 'mcp server notifications shed over their rate');
  const totalShed = () => shedLines().reduce((sum, l) => sum + Number(l.fields.shed), 0);
  expect(await until(() => shedLines().length >= 1 && totalShed() >= leastShed, 10_000)).toBe(true);
  // The last window's report is told a second after it began (and the timer's lag).
  await sleep(SHED_REPORT_MS + 200);
  process.stdout.write(`busy: ${totalShed()} notifications shed of ${sentAll} (at least ${leastShed}: the calls took ${took} ms), ${shedLines().length} log lines\n`);
  expect(totalShed()).toBeGreaterThanOrEqual(leastShed);
  expect(totalShed()).toBeLessThanOrEqual(sentAll + 1);
  // Once a second at most: a window begins a second or more after the one before began.
  expect(shedLines().length).toBeLessThanOrEqual(Math.floor(took / SHED_REPORT_MS) + 1);
  for (const line of shedLines()) expect(line.fields).toMatchObject({ server: 'chatty', shed: expect.any(Number) });
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
}, 60_000);

test('a server flooding notifications alone, far past their rate, is dropped well before its flood ends and dispatch s CPU is bounded', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ FLOOD_MS: '10000' }), { logger, onTools: () => undefined });
  await connection.start();
  const cpu = process.cpuUsage();
  const began = Date.now();
  const outcome = await connection.call('flood', { only: 'notifications' }, callCtx(30_000)).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failedAfter = Date.now() - began;
  const spentToDrop = cpuMsSince(cpu);
  await sleep(Math.max(0, 1_500 - failedAfter));
  const spent = cpuMsSince(cpu);
  process.stdout.write(`notification flood: dropped after ${failedAfter} ms; dispatch CPU ${spent.toFixed(0)} ms over ${Date.now() - began} ms (${(spent - spentToDrop).toFixed(0)} ms after the drop); the server sent ${sent()} messages\n`);
  expect(outcome).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  // Shed, each costs ~10-15 us: dropped at ~30,000 past 10,000 a second (MAX_SERVER_MESSAGE_BURST),
  // after ~0.5 s on an idle machine, ~0.7-1.9 s with both cores kept busy by other processes, where
  // reading the flood for its 10 s would take dispatch's CPU for all of it.
  // ~800-900 ms of CPU on a slower machine (1,102 ms in a CI run): the bound on the whole is loose,
  // and what shows the flood is no longer read is the CPU after the drop (~10 ms).
  expect(failedAfter).toBeLessThan(6_000);
  expect(spent).toBeLessThan(2_000);
  expect(spent - spentToDrop).toBeLessThan(150);
  const lost = logger.lines.filter((l) => l.message.includes('connection lost'));
  expect(lost).toHaveLength(1);
  expect(lost[0]!.fields).toMatchObject({ server: 'chatty', reason: 'the MCP server sent more than 10000 messages a second (burst 30000)' });
}, 30_000);

// An answer to an id never used costs dispatch ~25 us as it is read (the SDK reports it), a line
// that is no message ~30-40 us (parsed, the schema's issues built, reported): counted in the total
// alone (10,000 a second) a flood of them took a third of a core, and a process given less than
// half a core read them slower than the total allowed, never dropping them. Counted as errors too
// (100 a second, bursts of 1,000), they are dropped after ~1,000 however slowly they are read.
// Through the SDK's client and stdio transport as a connection has them, at the default bounds.
test.each([
  ['answers to ids dispatch never used', 'answers'],
  // Old code: an answer without an id was taken for none, so never counted as an error.
  ['errors with no id (valid JSON-RPC: the SDK reports each as an unknown id)', 'idless'],
  ['lines that are no JSON-RPC message', 'malformed'],
])('a server flooding %s is dropped past the rate of its errors, and dispatch s CPU is bounded', async (_, only) => {
  const server = config({ FLOOD_MS: '10000' });
  const transport = new StdioClientTransport({ command: server.command![0]!, args: server.command!.slice(1), env: { ...getDefaultEnvironment(), ...server.env }, stderr: 'pipe' });
  useLineBuffer(transport, 64 * 1024 * 1024);
  const client = new Client({ name: 'test', version: '1' }, { capabilities: {} });
  const reasons: string[] = [];
  let began = Date.now();
  let abusedAfter = Infinity;
  let cpu = process.cpuUsage();
  let spentToDrop = NaN;
  guardRequests(transport, {
    onAbuse: (reason) => {
      abusedAfter = Date.now() - began;
      spentToDrop = cpuMsSince(cpu);
      reasons.push(reason);
      void client.close();
    },
  });
  await client.connect(transport);
  cpu = process.cpuUsage();
  began = Date.now();
  const outcome = await client.callTool({ name: 'flood', arguments: { only } }, undefined, { timeout: 30_000 }).then(
    () => 'answered',
    (error: Error) => error.message,
  );
  await sleep(Math.max(0, 1_500 - (Date.now() - began)));
  const spent = cpuMsSince(cpu);
  process.stdout.write(`${only} flood: dropped after ${abusedAfter} ms; dispatch CPU ${spent.toFixed(0)} ms over ${Date.now() - began} ms (${(spent - spentToDrop).toFixed(0)} ms after the drop); the server sent ${sent()} messages\n`);
  // Old code: dropped only past the total (10,000 a second, bursts of 30,000), after ~1-1.5 s on an
  // idle machine, and never with both cores kept busy by other processes: the call was answered
  // after the whole flood (10 s), dispatch's CPU taken all along.
  expect(reasons).toEqual([`the MCP server sent more than ${MAX_SERVER_ERRORS_PER_SECOND} answers to no request or lines that are no message a second (burst ${MAX_SERVER_ERROR_BURST})`]);
  expect(outcome).not.toBe('answered');
  // ~1,000 read: ~0.1 s on an idle machine.
  expect(abusedAfter).toBeLessThan(2_000);
  // Nothing more is read once dropped (its stdout closed: the server's next write fails, and it
  // exits) but what was already buffered: ~10-20 ms after the drop, ~190 ms for malformed lines.
  expect(spent).toBeLessThan(1_000);
  expect(spent - spentToDrop).toBeLessThan(400);
}, 30_000);

test('a connection whose server floods answers to ids never used is dropped, logged once with the reason, and connected to again', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ FLOOD_MS: '10000' }), { logger, onTools: () => undefined });
  await connection.start();
  const outcome = await connection.call('flood', { only: 'answers' }, callCtx(30_000)).then(
    () => undefined,
    (error: unknown) => error,
  );
  // Old code: answered after the whole flood (10 s), or dropped past the total after ~1 s.
  expect(outcome).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  const lost = logger.lines.filter((l) => l.message.includes('connection lost'));
  expect(lost).toHaveLength(1);
  expect(lost[0]!.fields).toMatchObject({ server: 'chatty', reason: 'the MCP server sent more than 100 answers to no request or lines that are no message a second (burst 1000)' });
  expect((outcome as Error).message).toBe('the connection to MCP server "chatty" was lost mid-request (the MCP server sent more than 100 answers to no request or lines that are no message a second (burst 1000))');
  expect(await until(() => connection!.connected() && starts().length >= 2, 10_000)).toBe(true);
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
}, 30_000);

test('a server answering 64 calls at a time as fast as they come, for 2 s, is never dropped: its answers are no errors', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config(), { logger, onTools: () => undefined });
  await connection.start();
  const end = Date.now() + 2_000;
  let answered = 0;
  const caller = async () => {
    while (Date.now() < end) {
      const result = await connection!.call('echo', { n: answered }, callCtx());
      expect(result.isError).toBeFalsy();
      answered++;
    }
  };
  await Promise.all(Array.from({ length: 64 }, caller));
  process.stdout.write(`fast answers: ${answered} calls answered in 2 s\n`);
  // Were its answers taken for errors, it would be dropped after ~1,000 (MAX_SERVER_ERROR_BURST) and
  // 100 a second more: it answers ~2,000-4,000 a second on an idle machine, fewer on a busy one.
  expect(answered).toBeGreaterThan(MAX_SERVER_ERROR_BURST + 2 * MAX_SERVER_ERRORS_PER_SECOND);
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(connection.connected()).toBe(true);
  expect(starts()).toHaveLength(1);
}, 30_000);

// A server answering every call cancelled, as the Python SDK's servers do (an error "Request
// cancelled"): each late answer was an error, and 250 calls a second cancelled dropped its connection
// after ~6.7 s, or 1,000 timing out at once in a stall, failing every other call on it.
test.each([
  ['600 calls a second cancelled for 3 s', { every: 100, batch: 60, batches: 30 }],
  ['1,200 calls cancelled at once', { every: 0, batch: 1_200, batches: 1 }],
])('a server answering every call cancelled with an error is never dropped: %s', async (_, a) => {
  const logger = recordingLogger();
  connection = createMcpConnection(config(), { logger, onTools: () => undefined });
  await connection.start();
  const began = Date.now();
  let cancelled = 0;
  for (let b = 0; b < a.batches; b++) {
    const next = sleep(a.every);
    const controllers = Array.from({ length: a.batch }, () => new AbortController());
    const calls = controllers.map((controller) => connection!.call('wait', {}, { signal: controller.signal, deadline: Date.now() + 10_000 }).catch((error: unknown) => error));
    await sleep(20);
    for (const controller of controllers) controller.abort(new Error('cancelled'));
    for (const outcome of await Promise.all(calls)) expect(outcome).toBeInstanceOf(Error);
    cancelled += a.batch;
    await next;
  }
  // Every late answer read: the server counts those it sent, and answers in order.
  const counted = await connection.call('cancels', {}, callCtx());
  process.stdout.write(`cancelled calls answered: ${cancelled} in ${Date.now() - began} ms\n`);
  expect(JSON.stringify(counted.content)).toContain(`cancels ${cancelled}`);
  // Old code: dropped past the errors' burst (1,000) and rate (100 a second).
  expect(logger.lines.filter((l) => l.message.includes('connection lost'))).toEqual([]);
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(connection.connected()).toBe(true);
  expect(starts()).toHaveLength(1);
}, 30_000);

test('a tools/list_changed a server sends once its client is retired starts no listing: no refresh is told failed', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ CHANGES_AFTER_END: '1' }), { logger, onTools: () => undefined });
  await connection.start();
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
  // The server ignores its stdin's end, sending changes until the SDK's SIGTERM 2 s later.
  await connection.close();
  connection = undefined;
  expect(logLines()).toContain('stdin ended');
  // Old code: each started a listing on the retired client, which failed ('Not connected').
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
});

test.each([
  ['advertises logging', '1', ['setLevel warning']],
  ['advertises logging and refuses the level', 'refuse', ['setLevel refused']],
  ['does not advertise logging', '', []],
])('a server that %s is asked once for warnings and worse, and a refusal is ignored', async (_, logging, asked) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const logger = recordingLogger();
    connection = createMcpConnection(config({ LOGGING: logging }), { logger, onTools: () => undefined });
    await connection.start();
    // The server answers in order: the level (asked as it connected) before the call.
    expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
    await sleep(50);
    expect(logLines().filter((l) => l.startsWith('setLevel'))).toEqual(asked);
    expect(unhandled).toEqual([]);
    expect(connection.connected()).toBe(true);
    expect((await connection.call('echo', { a: 2 }, callCtx())).isError).toBeFalsy();
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('the rate admits a burst, then its rate, and refuses past them', () => {
  let now = 0;
  const rate = createMessageRate({ perSecond: 200, burst: 400, now: () => now });
  for (let k = 0; k < 400; k++) expect(rate.admit()).toBe(true);
  expect(rate.admit()).toBe(false);
  now += 1_000;
  for (let k = 0; k < 200; k++) expect(rate.admit()).toBe(true);
  expect(rate.admit()).toBe(false);
  // Never more than the burst, however long it was quiet.
  now += 60_000;
  let admitted = 0;
  while (rate.admit()) admitted++;
  expect(admitted).toBe(400);
  expect([MAX_SERVER_REQUESTS_PER_SECOND, MAX_SERVER_REQUEST_BURST]).toEqual([1_000, 1_000]);
  expect([MAX_SERVER_NOTIFICATIONS_PER_SECOND, MAX_SERVER_NOTIFICATION_BURST]).toEqual([1_000, 2_000]);
  expect([MAX_SERVER_MESSAGES_PER_SECOND, MAX_SERVER_MESSAGE_BURST]).toEqual([10_000, 30_000]);
  expect([MAX_SERVER_ERRORS_PER_SECOND, MAX_SERVER_ERROR_BURST]).toEqual([100, 1_000]);
});

function fakeTransport() {
  const delivered: unknown[] = [];
  const errors: Error[] = [];
  let destroyed = 0;
  const transport = {
    _process: { stdin: { writableLength: 0, writableNeedDrain: false }, stdout: { destroy: () => void destroyed++ } },
    onmessage: (message: unknown) => void delivered.push(message),
    onerror: (error: Error) => void errors.push(error),
    onclose: () => undefined,
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    send: (_message?: unknown): Promise<void> => Promise.resolve(),
  };
  return { transport, delivered, errors, destroyed: () => destroyed };
}
const ping = (id: string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const note = (k: number) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: k } });
const listChanged = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

test('the guard counts the server s requests and notifications apart, not answers; past their rate notifications are shed and requests drop the connection, which stops reading a stdio server', async () => {
  const { transport, delivered, destroyed } = fakeTransport();
  const reasons: string[] = [];
  const shed: number[] = [];
  // Its clock stands still: the buckets are not refilled as the test waits for the reports.
  const rate = { perSecond: 10, burst: 20, now: () => 0 };
  guardRequests(transport as never, { messageRates: { requests: rate, notifications: rate }, onAbuse: (reason) => reasons.push(reason), onShed: (count) => shed.push(count), shedReportMs: 100 });
  await transport.start();
  // Dispatch's requests: their answers are neither the server's messages nor errors.
  for (let k = 0; k < 1_000; k++) await transport.send({ jsonrpc: '2.0', id: k, method: 'tools/call' });
  for (let k = 0; k < 1_000; k++) transport.onmessage({ jsonrpc: '2.0', id: k, result: {} });
  for (let k = 0; k < 20; k++) transport.onmessage(ping(`s${k}`));
  for (let k = 0; k < 20; k++) transport.onmessage(note(k));
  expect(delivered).toHaveLength(1_040);
  // Old code: the connection was dropped at the 21st message.
  for (let k = 0; k < 50; k++) transport.onmessage(note(k));
  expect(reasons).toEqual([]);
  expect(delivered).toHaveLength(1_040);
  // Told their count at the end of the window of the first.
  expect(shed).toEqual([]);
  await sleep(150);
  expect(shed).toEqual([50]);
  transport.onmessage(note(50));
  await sleep(150);
  expect(shed).toEqual([50, 1]);
  expect(destroyed()).toBe(0);
  transport.onmessage({ jsonrpc: '2.0', id: 'late', result: {} });
  expect(delivered).toHaveLength(1_041);
  transport.onmessage(ping('s20'));
  transport.onmessage({ jsonrpc: '2.0', id: 'later', result: {} });
  expect(reasons).toEqual(['the MCP server sent more than 10 requests a second (burst 20)']);
  expect(delivered).toHaveLength(1_041);
  expect(destroyed()).toBe(1);
});

test('the guard drops the connection of a server sending far more notifications than their rate, shed or not', async () => {
  const { transport, delivered, destroyed } = fakeTransport();
  const reasons: string[] = [];
  guardRequests(transport as never, { messageRates: { notifications: { perSecond: 10, burst: 20 }, messages: { perSecond: 100, burst: 300 } }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  for (let k = 0; k < 300; k++) transport.onmessage(note(k));
  expect(reasons).toEqual([]);
  expect(delivered).toHaveLength(20);
  // The next one past the burst, or a few more: the 300 took over 10 ms once in a full run on a
  // busy machine, and the bucket had taken a message back meanwhile (100 a second).
  for (let k = 300; k < 350 && reasons.length === 0; k++) transport.onmessage(note(k));
  expect(reasons).toEqual(['the MCP server sent more than 100 messages a second (burst 300)']);
  expect(destroyed()).toBe(1);
});

test.each([
  ['answers to ids dispatch never used', 'answers'],
  ['lines that are no message (the transport s errors)', 'errors'],
  ['answers and lines that are no message', 'both'],
])('the guard counts %s in the total and drops the connection past it', async (_, kind) => {
  const { transport, delivered, errors, destroyed } = fakeTransport();
  const reasons: string[] = [];
  guardRequests(transport as never, { messageRates: { messages: { perSecond: 100, burst: 300, now: () => 0 } }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  const send = (k: number) => {
    if (kind === 'answers' || (kind === 'both' && k % 2 === 0)) transport.onmessage({ jsonrpc: '2.0', id: 1e9 + k, result: {} });
    else transport.onerror(new SyntaxError(`Unexpected token at ${k}`));
  };
  for (let k = 0; k < 300; k++) send(k);
  expect(reasons).toEqual([]);
  expect(delivered.length + errors.length).toBe(300);
  // Old code: neither was counted, the connection never dropped.
  send(300);
  expect(reasons).toEqual(['the MCP server sent more than 100 messages a second (burst 300)']);
  expect(destroyed()).toBe(1);
  // Nothing more is delivered, neither messages nor errors.
  send(301);
  send(302);
  expect(delivered.length + errors.length).toBe(300);
  expect(reasons).toHaveLength(1);
});

test('a tools/list_changed past the rate of notifications is held and delivered, one for all those shed meanwhile, unless the connection is dropped or closed first', async () => {
  const rate = { perSecond: 1, burst: 1 };
  const { transport, delivered } = fakeTransport();
  guardRequests(transport as never, { messageRates: { notifications: rate, requests: rate }, onAbuse: () => undefined });
  await transport.start();
  transport.onmessage(note(0));
  for (let k = 0; k < 5; k++) transport.onmessage(listChanged);
  expect(delivered).toHaveLength(1);
  await sleep(HELD_LIST_CHANGE_MS + 50);
  expect(delivered).toEqual([note(0), listChanged]);

  const dropped = fakeTransport();
  guardRequests(dropped.transport as never, { messageRates: { notifications: rate, requests: rate }, onAbuse: () => undefined });
  await dropped.transport.start();
  dropped.transport.onmessage(note(0));
  dropped.transport.onmessage(listChanged);
  dropped.transport.onmessage(ping('a'));
  dropped.transport.onmessage(ping('b'));
  const closed = fakeTransport();
  guardRequests(closed.transport as never, { messageRates: { notifications: rate }, onAbuse: () => undefined });
  await closed.transport.start();
  closed.transport.onmessage(note(0));
  closed.transport.onmessage(listChanged);
  closed.transport.onclose();
  await sleep(HELD_LIST_CHANGE_MS + 50);
  expect(dropped.delivered).toEqual([note(0), ping('a')]);
  expect(closed.delivered).toEqual([note(0)]);
});

test.each([
  ['answers to ids dispatch never used', 'answers'],
  ['errors with no id', 'idless'],
  ['lines that are no message (the transport s errors)', 'errors'],
  ['answers and lines that are no message', 'both'],
])('the guard counts %s as errors, and drops the connection past their rate', async (_, kind) => {
  const { transport, delivered, errors, destroyed } = fakeTransport();
  const reasons: string[] = [];
  guardRequests(transport as never, { messageRates: { errors: { perSecond: 10, burst: 20, now: () => 0 } }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  const send = (k: number) => {
    // Old code: an error with no id (valid JSON-RPC) was taken for no answer, and never counted.
    if (kind === 'idless') transport.onmessage({ jsonrpc: '2.0', error: { code: -32700, message: `no id ${k}` } });
    else if (kind === 'answers' || (kind === 'both' && k % 2 === 0)) transport.onmessage({ jsonrpc: '2.0', id: 1e9 + k, result: {} });
    else transport.onerror(new SyntaxError(`Unexpected token at ${k}`));
  };
  for (let k = 0; k < 20; k++) send(k);
  expect(reasons).toEqual([]);
  // Still delivered under the bound: the client reports them.
  expect(delivered.length + errors.length).toBe(20);
  // Old code: counted in the total alone (10,000 a second), not dropped.
  send(20);
  expect(reasons).toEqual(['the MCP server sent more than 10 answers to no request or lines that are no message a second (burst 20)']);
  expect(destroyed()).toBe(1);
  send(21);
  expect(delivered.length + errors.length).toBe(20);
  expect(reasons).toHaveLength(1);
});

test('the guard takes no answer to a request of dispatch in flight, nor the one late answer to one given up, for an error; a second answer, or one to a request not sent, is', async () => {
  const { transport, delivered } = fakeTransport();
  const reasons: string[] = [];
  let refuse = false;
  transport.send = () => (refuse ? Promise.reject(new Error('not connected')) : Promise.resolve());
  guardRequests(transport as never, { messageRates: { errors: { perSecond: 1, burst: 3, now: () => 0 } }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  const request = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call' });
  const answer = (id: number | string) => ({ jsonrpc: '2.0', id, result: {} });
  for (let k = 0; k < 100; k++) await transport.send(request(k));
  // As the SDK: "7" answers request 7.
  for (let k = 0; k < 100; k++) transport.onmessage(answer(k === 7 ? '7' : k));
  expect(reasons).toEqual([]);
  await transport.send(request(100));
  await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 100, reason: 'timed out' } });
  refuse = true;
  await expect(transport.send(request(101))).rejects.toThrow('not connected');
  // Old code: the late answer to the request cancelled was an error, and the third dropped the connection.
  transport.onmessage(answer(100));
  transport.onmessage(answer(101));
  transport.onmessage(answer(0));
  transport.onmessage(answer(100));
  expect(reasons).toEqual([]);
  expect(delivered).toHaveLength(104);
  transport.onmessage(answer(1));
  expect(reasons).toEqual(['the MCP server sent more than 1 answers to no request or lines that are no message a second (burst 3)']);
});

// The Python SDK's servers answer every request they are told is cancelled (RequestResponder.cancel:
// an error "Request cancelled"): each call dispatch cancels or times out gets one late answer.
test('the guard takes none of 10,000 late answers, one to each request cancelled, for an error', async () => {
  const { transport, delivered } = fakeTransport();
  const reasons: string[] = [];
  guardRequests(transport as never, { messageRates: { errors: { perSecond: 1, burst: 3, now: () => 0 } }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  // In a stall: 4,000 given up before any late answer comes (under MAX_GIVEN_UP_REMEMBERED).
  for (let k = 0; k < 4_000; k++) await transport.send({ jsonrpc: '2.0', id: k, method: 'tools/call' });
  for (let k = 0; k < 4_000; k++) await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: k } });
  for (let k = 0; k < 4_000; k++) transport.onmessage({ jsonrpc: '2.0', id: k, error: { code: 0, message: 'Request cancelled' } });
  // Then one at a time, each answered as soon as it is cancelled.
  for (let k = 4_000; k < 10_000; k++) {
    await transport.send({ jsonrpc: '2.0', id: k, method: 'tools/call' });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: k } });
    transport.onmessage({ jsonrpc: '2.0', id: k, error: { code: 0, message: 'Request cancelled' } });
  }
  // Old code: dropped at the fourth.
  expect(reasons).toEqual([]);
  expect(delivered).toHaveLength(10_000);
});

test('the requests in flight forget their ids once closed, and the oldest past their bound', () => {
  const requests = createRequestsInFlight(3);
  for (let k = 0; k < 4; k++) requests.sending({ jsonrpc: '2.0', id: k, method: 'ping' });
  expect([0, 1, 2, 3].map((id) => requests.answered({ jsonrpc: '2.0', id, result: {} }))).toEqual([false, true, true, true]);
  requests.sending({ jsonrpc: '2.0', id: 4, method: 'ping' });
  requests.clear();
  expect(requests.answered({ jsonrpc: '2.0', id: 4, result: {} })).toBe(false);
  // Notifications and answers dispatch sends are no requests.
  requests.sending({ jsonrpc: '2.0', method: 'notifications/initialized' });
  requests.sending({ jsonrpc: '2.0', id: 5, result: {} });
  expect(requests.answered({ jsonrpc: '2.0', id: 5, result: {} })).toBe(false);
});

test('the requests given up are remembered for one late answer each, which proves the server alive, the oldest forgotten past their bound or their time', () => {
  let now = 0;
  const requests = createRequestsInFlight(MAX_REQUESTS_REMEMBERED, { max: 3, ms: 1_000, now: () => now });
  const request = (id: number) => requests.sending({ jsonrpc: '2.0', id, method: 'tools/call' });
  const cancel = (id: number) => requests.sending({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
  const answer = (id: number) => ({ jsonrpc: '2.0' as const, id, error: { code: 0, message: 'Request cancelled' } });
  for (let k = 0; k < 5; k++) request(k);
  for (let k = 0; k < 4; k++) cancel(k);
  // Cancelling one never sent, or answered already, leaves no late answer to take.
  cancel(99);
  const late = answer(1);
  expect(requests.answered(late)).toBe(true);
  expect(answersRequestInFlight(late)).toBe(true);
  // 0 was forgotten past the bound (3), 1 is answered already, 99 was never sent.
  expect([0, 1, 99].map((id) => requests.answered(answer(id)))).toEqual([false, false, false]);
  now = 999;
  request(10);
  cancel(10);
  now = 1_000;
  // 2 and 3 were given up 1,000 ms ago: forgotten; 10 is not.
  expect([2, 3, 10].map((id) => requests.answered(answer(id)))).toEqual([false, false, true]);
  // 4 is still in flight; an answer with no id answers nothing.
  expect(requests.answered(answer(4))).toBe(true);
  const idless = { jsonrpc: '2.0' as const, error: { code: -32700, message: 'x' } };
  expect(requests.answered(idless as never)).toBe(false);
  expect(answersRequestInFlight(idless)).toBe(false);
  expect([MAX_GIVEN_UP_REMEMBERED, GIVEN_UP_MS]).toEqual([4_096, 60_000]);
  request(20);
  cancel(20);
  requests.clear();
  expect(requests.answered(answer(20))).toBe(false);
});

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}
