import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMcpConnection, LineBuffer, parseMcpServers, useLineBuffer, type McpConnection } from '../../src/executors/mcp';
import { SILENT_LOGGER } from '../../src/log';
import { slowerThanAsync } from '../helpers/cpu-time';

// A stdio MCP server's output is split into messages at a cost linear in its size: the SDK's
// ReadBuffer concatenated its whole buffer with each 64 KiB chunk and scanned it all again, so a
// 60 MiB answer took 26 s of CPU (the event loop stalled up to 556 ms at a time).

jest.setTimeout(60_000);

const MIB = 1024 * 1024;
const line = (message: object) => Buffer.from(`${JSON.stringify(message)}\n`);
const note = (n: number) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

describe('LineBuffer', () => {
  it('reads a message split across chunks, a multi-byte character cut between two', () => {
    const whole = line({ jsonrpc: '2.0', id: 1, result: { text: 'héllo wörld' } });
    const buffer = new LineBuffer(MIB);
    const cut = whole.indexOf(Buffer.from('é')) + 1;
    buffer.append(whole.subarray(0, 3));
    expect(buffer.readMessage()).toBeNull();
    buffer.append(whole.subarray(3, cut));
    expect(buffer.readMessage()).toBeNull();
    buffer.append(whole.subarray(cut));
    expect(buffer.readMessage()).toEqual({ jsonrpc: '2.0', id: 1, result: { text: 'héllo wörld' } });
    expect(buffer.readMessage()).toBeNull();
  });

  it('reads several messages of one chunk, with \\r\\n ends, and keeps the start of the next', () => {
    const buffer = new LineBuffer(MIB);
    const next = line(note(3));
    buffer.append(Buffer.concat([line(note(1)), Buffer.from(`${JSON.stringify(note(2))}\r\n`), next.subarray(0, 10)]));
    expect(buffer.readMessage()).toEqual(note(1));
    expect(buffer.readMessage()).toEqual(note(2));
    expect(buffer.readMessage()).toBeNull();
    buffer.append(next.subarray(10));
    expect(buffer.readMessage()).toEqual(note(3));
  });

  it('drops a line that is not a message (throwing, as the SDK does) and reads the next', () => {
    const buffer = new LineBuffer(MIB);
    buffer.append(Buffer.concat([Buffer.from('not json\n'), line(note(1))]));
    expect(() => buffer.readMessage()).toThrow();
    expect(buffer.readMessage()).toEqual(note(1));
  });

  it('bounds what it holds as the SDK does: past the bound it throws the SDK error and clears', () => {
    const buffer = new LineBuffer(100);
    buffer.append(Buffer.alloc(60, 0x20));
    expect(() => buffer.append(Buffer.alloc(41, 0x20))).toThrow('ReadBuffer exceeded maximum size of 100 bytes');
    expect(buffer.readMessage()).toBeNull();
    // Messages read no longer count: three of 56 bytes fit a bound of 100, one at a time.
    const message = line({ jsonrpc: '2.0', method: 'n', params: { p: 'x'.repeat(7) } });
    expect(message.length).toBe(56);
    for (let i = 0; i < 3; i++) {
      buffer.append(message);
      expect(buffer.readMessage()).toMatchObject({ method: 'n' });
    }
  });
});

test('the SDK stdio transport has the buffer useLineBuffer replaces', () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['-e', ''] });
  expect(useLineBuffer(transport, MIB)).toBe(true);
  expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(LineBuffer);
});

// A stdio server speaking the protocol by hand, so that how it writes is known: 'big' answers
// args.mb MiB in one write; 'trickle' answers a few bytes at a time; 'pair' holds its answer until
// a second 'pair' call comes, then writes both answers at once.
const SERVER = `
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (id, result) => JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n';
const text = (t) => ({ content: [{ type: 'text', text: t }] });
let held;
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.id === undefined) return;
  if (m.method === 'initialize') return void process.stdout.write(send(m.id, { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }));
  if (m.method === 'tools/list') return void process.stdout.write(send(m.id, { tools: ['big', 'trickle', 'pair'].map((name) => ({ name, inputSchema: { type: 'object' } })) }));
  const { name, arguments: args } = m.params;
  if (name === 'big') return void process.stdout.write(send(m.id, text('z'.repeat(args.mb * 1024 * 1024))));
  if (name === 'trickle') {
    const out = Buffer.from(send(m.id, text('trickled ü')));
    let at = 0;
    const next = () => { process.stdout.write(out.subarray(at, at + 7)); at += 7; if (at < out.length) setTimeout(next, 5); };
    return next();
  }
  if (held === undefined) return void (held = send(m.id, text('first')));
  process.stdout.write(held + send(m.id, text('second')));
  held = undefined;
});
`;

describe('a stdio server through createMcpConnection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-reads-'));
  const script = join(dir, 'server.js');
  writeFileSync(script, SERVER);
  let c: McpConnection;
  const call = (tool: string, args: Record<string, unknown> = {}) => c.call(tool, args, { signal: new AbortController().signal, deadline: Date.now() + 50_000 });
  const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
  beforeAll(async () => {
    const config = parseMcpServers([{ name: 'raw', command: [process.execPath, script] }], 'test.yaml')[0]!;
    c = createMcpConnection(config, { logger: SILENT_LOGGER, onTools: () => undefined });
    await c.start();
  });
  afterAll(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Judged by this process's CPU time, not the wall clock: under a loaded CI run the wall time of
  // a 40 MiB answer reached 4.5 s, while the split itself stays linear (the quadratic ReadBuffer
  // took ~11 s of CPU for 40 MiB).
  // Past 3 s, held to 8x a 10 MiB answer (a linear read takes 4x; the quadratic one 16x).
  it('reads a 40 MiB answer in well under 3 s of CPU', async () => {
    let result: unknown;
    expect(await slowerThanAsync(async () => (result = await call('big', { mb: 40 })), () => call('big', { mb: 10 }), 8, 3_000)).toBeUndefined();
    expect(textOf(result).length).toBe(40 * MIB);
  });

  it('reads an answer written a few bytes at a time, and two answers written at once', async () => {
    expect(textOf(await call('trickle'))).toBe('trickled ü');
    const [first, second] = await Promise.all([call('pair'), call('pair')]);
    expect([textOf(first), textOf(second)]).toEqual(['first', 'second']);
    expect(c.connected()).toBe(true);
  });
});
