import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createMcpConnection, parseMcpServers, type McpConnection } from '../../src/executors/mcp';
import { createMessageRate, MAX_SERVER_MESSAGE_BURST, MAX_SERVER_MESSAGES_PER_SECOND } from '../../src/executors/mcp/mcp-message-rate';
import { guardRequests } from '../../src/executors/mcp/mcp-request-guard';
import type { Logger } from '../../src/log';
import { isAlive } from './mcp-harness';

// A stdio MCP server (test/mcp/fixtures/chatty-server.js) that sends dispatch requests and
// notifications of its own (ping, roots/list, sampling, elicitation, logs, progress, unknown
// methods) in a tight loop while a call runs, and reads every answer: no bound on answers in
// flight or unread bytes is passed, and dispatch spent ~27 us of CPU on each message without end.

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

test('a server flooding requests and notifications while a call runs is dropped once past the rate, its call failing recoverable, and dispatch s CPU is bounded', async () => {
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
  expect(String(lost[0]!.fields.reason)).toMatch(/sent more than 1000 requests and notifications a second/);
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
  expect([MAX_SERVER_MESSAGES_PER_SECOND, MAX_SERVER_MESSAGE_BURST]).toEqual([1_000, 2_000]);
});

test('the guard counts the server s requests and notifications, not answers to dispatch s requests, and past the rate delivers nothing more and stops reading a stdio server', async () => {
  const delivered: unknown[] = [];
  let destroyed = 0;
  const transport = {
    _process: { stdin: { writableLength: 0, writableNeedDrain: false }, stdout: { destroy: () => void destroyed++ } },
    onmessage: (message: unknown) => void delivered.push(message),
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
    send: () => Promise.resolve(),
  };
  const reasons: string[] = [];
  guardRequests(transport as never, { messageRate: { perSecond: 10, burst: 20 }, onAbuse: (reason) => reasons.push(reason) });
  await transport.start();
  for (let k = 0; k < 1_000; k++) transport.onmessage({ jsonrpc: '2.0', id: k, result: {} });
  for (let k = 0; k < 10; k++) transport.onmessage({ jsonrpc: '2.0', id: `s${k}`, method: 'ping' });
  for (let k = 0; k < 10; k++) transport.onmessage({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: k } });
  expect(reasons).toEqual([]);
  expect(delivered).toHaveLength(1_020);
  transport.onmessage({ jsonrpc: '2.0', method: 'notifications/message' });
  transport.onmessage({ jsonrpc: '2.0', id: 'late', result: {} });
  expect(reasons).toEqual(['the MCP server sent more than 10 requests and notifications a second (burst 20)']);
  expect(delivered).toHaveLength(1_020);
  expect(destroyed).toBe(1);
});

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}
