import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import {
  createMessageRate,
  MAX_SERVER_MESSAGE_BURST,
  MAX_SERVER_MESSAGES_PER_SECOND,
  MAX_SERVER_NOTIFICATION_BURST,
  MAX_SERVER_NOTIFICATIONS_PER_SECOND,
  MAX_SERVER_REQUEST_BURST,
  MAX_SERVER_REQUESTS_PER_SECOND,
} from '../../src/executors/mcp/mcp-message-rate';
import { guardRequests, HELD_LIST_CHANGE_MS } from '../../src/executors/mcp/mcp-request-guard';
import type { Logger } from '../../src/log';
import { isAlive } from './mcp-harness';

// A stdio MCP server (test/mcp/fixtures/chatty-server.js) that sends dispatch requests and
// notifications of its own (ping, roots/list, sampling, elicitation, logs, progress, unknown
// methods) in a tight loop while a call runs, and reads every answer: no bound on answers in
// flight or unread bytes is passed, and dispatch spent ~27 us of CPU on each message without end.
// Then a server busy but compliant (many calls, each logging every few ms), which the first bound
// (1,000 requests and notifications a second, then the connection dropped) dropped too.

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
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1_000;
};

test('a server flooding requests and notifications while a call runs is dropped once past the rate of its requests, its call failing recoverable, and dispatch s CPU is bounded', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ FLOOD_MS: '1500' }), { logger, onTools: () => undefined });
  await connection.start();
  expect(connection.connected()).toBe(true);
  const cpu = process.cpuUsage();
  const began = Date.now();
  const outcome = await connection.call('flood', {}, callCtx()).then(
    () => undefined,
    (error: unknown) => error,
  );
  // The same window whatever the outcome: the flood lasts 1.5 s.
  await sleep(Math.max(0, 1_700 - (Date.now() - began)));
  const spent = cpuMs(cpu);
  process.stdout.write(`flood: dispatch CPU ${spent.toFixed(0)} ms over ${Date.now() - began} ms; the server sent ${sent()} messages\n`);
  // Old code: the call succeeded after 1.5 s of flood, ~1,000 ms of dispatch's CPU or more.
  expect(outcome).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  expect(spent).toBeLessThan(400);
  const lost = logger.lines.filter((l) => l.message.includes('connection lost'));
  expect(lost).toHaveLength(1);
  expect(String(lost[0]!.fields.reason)).toBe('the MCP server sent more than 1000 requests a second (burst 1000)');
  expect(lost[0]!.fields.server).toBe('chatty');
  // Reconnected with its backoff; a call that does not flood then succeeds.
  expect(await until(() => connection!.connected() && starts().length >= 2, 5_000)).toBe(true);
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
});

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

test('a busy server (12 calls, each sending a log message and a progress notification every 5 ms for 1 s) is not dropped: its calls succeed, the notifications past their rate are shed and logged, a tools/list_changed among them is not lost', async () => {
  const logger = recordingLogger();
  const told: string[][] = [];
  const onTools = (tools: unknown[]) => void told.push(tools.map((t) => (t as { name: string }).name));
  connection = createMcpConnection(config(), { logger, onTools });
  await connection.start();
  const calls = Array.from({ length: 12 }, (_, k) => connection!.call('busy', { ms: 1_000, every: 5, change: k === 0 }, callCtx()));
  const results = await Promise.all(calls);
  // Old code: the connection was dropped after ~0.3 s and every call failed UNAVAILABLE.
  for (const result of results) expect(JSON.stringify(result.content)).toMatch(/busy \d+/);
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  expect(connection.connected()).toBe(true);
  expect(starts()).toHaveLength(1);
  expect(await until(() => told.some((names) => names.includes('added')), 2_000)).toBe(true);
  const shedLines = () => logger.lines.filter((l) => l.message === 'mcp server notifications shed over their rate');
  expect(await until(() => shedLines().length >= 1, 2_000)).toBe(true);
  // Once a second at most: the shedding lasts ~0.6 s.
  expect(shedLines().length).toBeLessThanOrEqual(2);
  for (const line of shedLines()) expect(line.fields).toMatchObject({ server: 'chatty', shed: expect.any(Number) });
  const total = shedLines().reduce((sum, l) => sum + Number(l.fields.shed), 0);
  process.stdout.write(`busy: ${total} notifications shed (${shedLines().length} log lines)\n`);
  expect(total).toBeGreaterThan(500);
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
});

test('a server flooding notifications alone, far past their rate, is dropped within a second and dispatch s CPU is bounded', async () => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ FLOOD_MS: '5000' }), { logger, onTools: () => undefined });
  await connection.start();
  const cpu = process.cpuUsage();
  const began = Date.now();
  const outcome = await connection.call('flood', { only: 'notifications' }, callCtx()).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failedAfter = Date.now() - began;
  await sleep(Math.max(0, 1_500 - failedAfter));
  const spent = cpuMs(cpu);
  process.stdout.write(`notification flood: dropped after ${failedAfter} ms; dispatch CPU ${spent.toFixed(0)} ms over ${Date.now() - began} ms; the server sent ${sent()} messages\n`);
  expect(outcome).toMatchObject({ kind: ErrorKind.UNAVAILABLE, recoverable: true });
  // Shed, each costs ~10 us: dropped at ~30,000 past 10,000 a second (MAX_SERVER_MESSAGE_BURST),
  // where reading the flood for its 5 s would take dispatch's CPU for all of it.
  expect(failedAfter).toBeLessThan(1_500);
  expect(spent).toBeLessThan(1_000);
  const lost = logger.lines.filter((l) => l.message.includes('connection lost'));
  expect(lost).toHaveLength(1);
  expect(lost[0]!.fields).toMatchObject({ server: 'chatty', reason: 'the MCP server sent more than 10000 requests and notifications a second (burst 30000)' });
});

test.each([
  ['advertises logging', '1', ['setLevel warning']],
  ['advertises logging and refuses the level', 'refuse', []],
  ['does not advertise logging', '', []],
])('a server that %s is asked once for warnings and worse, and a refusal is ignored', async (_, logging, asked) => {
  const logger = recordingLogger();
  connection = createMcpConnection(config({ LOGGING: logging }), { logger, onTools: () => undefined });
  await connection.start();
  expect((await connection.call('echo', { a: 1 }, callCtx())).isError).toBeFalsy();
  expect(logLines().filter((l) => l.startsWith('setLevel'))).toEqual(asked);
  expect(connection.connected()).toBe(true);
  expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
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
});

function fakeTransport() {
  const delivered: unknown[] = [];
  let destroyed = 0;
  const transport = {
    _process: { stdin: { writableLength: 0, writableNeedDrain: false }, stdout: { destroy: () => void destroyed++ } },
    onmessage: (message: unknown) => void delivered.push(message),
    onclose: () => undefined,
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    send: () => Promise.resolve(),
  };
  return { transport, delivered, destroyed: () => destroyed };
}
const ping = (id: string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const note = (k: number) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: k } });
const listChanged = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

test('the guard counts the server s requests and notifications, not answers to dispatch s requests; past their rate notifications are shed and requests drop the connection, which stops reading a stdio server', async () => {
  const { transport, delivered, destroyed } = fakeTransport();
  const reasons: string[] = [];
  const shed: number[] = [];
  // Its clock stands still: the buckets are not refilled as the test waits for the reports.
  const rate = { perSecond: 10, burst: 20, now: () => 0 };
  guardRequests(transport as never, { messageRates: { requests: rate, notifications: rate }, onAbuse: (reason) => reasons.push(reason), onShed: (count) => shed.push(count), shedReportMs: 100 });
  await transport.start();
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
  transport.onmessage(note(300));
  expect(reasons).toEqual(['the MCP server sent more than 100 requests and notifications a second (burst 300)']);
  expect(destroyed()).toBe(1);
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

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}
