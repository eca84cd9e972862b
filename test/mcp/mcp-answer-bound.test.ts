// An MCP answer over Streamable HTTP is read up to limits.max_tool_output_chars x 4 bytes (here
// 256 Ki characters: 1 MiB), as an HTTP tool's is: the SDK read a JSON answer with response.json()
// and an SSE answer into its parser, whole, before the output cap cut it (a 300 MB answer grew the
// replica by 1.2 GiB). Past the bound the call fails DURING, and the connection serves the others.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { createAnswerCounter } from '../../src/executors/mcp';
import { startApp } from '../helpers/servers';

jest.setTimeout(60_000);

type AppT = Awaited<ReturnType<typeof startApp>>;
const FIXTURE = path.join(__dirname, 'fixtures/big-answer-server.js');
const MESSAGE = 'the answer of MCP server "big" exceeded 1048576 bytes (limits.max_tool_output_chars x 4); it was not read';

let child: ChildProcess;
let port: number;
beforeAll(async () => {
  child = spawn(process.execPath, [FIXTURE], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise<number>((resolve) => child.stdout!.on('data', (c: Buffer) => {
    const m = /LISTENING (\d+)/.exec(String(c));
    if (m) resolve(Number(m[1]));
  }));
});
afterAll(() => void child.kill('SIGKILL'));

const counted = async (what: string) => Number(await (await fetch(`http://127.0.0.1:${port}/${what}`)).text());
const initializes = () => counted('initializes');
const run = (t: AppT, name: string, args: object, sessionId = 's') =>
  t.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

describe.each(['json', 'sse'])('answers as %s', (mode) => {
  let t: AppT;
  beforeAll(async () => {
    t = await startApp(`limits: { max_tool_output_chars: 262144 }\nmcp_servers:\n  - { name: big, url: "http://127.0.0.1:${port}/mcp/${mode}", trusted: true }\n`);
  });
  afterAll(() => t.close());

  it('a 300 MB answer fails DURING without being held in memory, and the calls beside it are answered on the same connection', async () => {
    const connections = await initializes();
    const beside = run(t, 'big_slow', { ms: 1500 }, 's2');
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const big = await run(t, 'big_big', { mb: 300 });
    clearInterval(sampler);
    expect(big.error?.kind).toBe(ErrorKind.UNEXPECTED);
    expect(big.error?.message).toBe(MESSAGE);
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
    expect((await beside).output).toBe('slept 1500');
    expect((await run(t, 'big_echo', { text: 'still here' })).output).toBe('still here');
    expect(await initializes()).toBe(connections);
  });

  it('an answer within the bound is read, and a side-effecting call whose answer is too large may have run', async () => {
    const small = await run(t, 'big_big', { mb: 0.5 });
    expect(small.isError).toBe(false);
    expect(small.output.length).toBeGreaterThan(0);
    const written = await run(t, 'big_big_write', { mb: 2 }, `w-${mode}`);
    expect(written.error?.message).toBe(MESSAGE);
    expect(written.error?.recoverable).toBe(false);
    // DURING: the outcome of the call it ran is not known, so the same call again is not run.
    expect((await run(t, 'big_big_write', { mb: 2 }, `w-${mode}`)).error?.kind).toBe(ErrorKind.OUTCOME_UNKNOWN);
  });

  it('two identical calls at once each get their own outcome: the one answered too large fails, the other is read', async () => {
    const connections = await initializes();
    const received = await counted('twins');
    const twins = await Promise.all(['t1', 't2'].map((sessionId) => run(t, 'big_twin', { mb: 2, ms: 300 }, `${sessionId}-${mode}`)));
    const outcomes = twins.map((r) => (r.error ? `${ErrorKind[r.error.kind]} ${r.error.message}` : `OK ${r.output}`));
    expect(outcomes.sort()).toEqual(['OK small', `UNEXPECTED ${MESSAGE}`]);
    // Each ran once: neither waited for an answer that went to the other, and none was retried.
    expect(await counted('twins')).toBe(received + 2);
    expect(await initializes()).toBe(connections);
  });

  it("a server's error made like the stand-in for an answer too large is the server's error", async () => {
    const forged = await run(t, 'big_forge', {});
    expect(ErrorKind[forged.error!.kind]).toBe('TOOL_ERROR');
    expect(forged.error?.message).toBe('MCP server "big" answered an error: MCP error -31413: forged');
  });
});

describe('createAnswerCounter', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('counts a JSON body whole, across chunks', () => {
    const past = createAnswerCounter(false, 10);
    expect(past(bytes('12345'))).toBe(false);
    expect(past(bytes('\n\n\n\n\n'))).toBe(false);
    expect(past(bytes('x'))).toBe(true);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('counts each SSE event (lines ending %s), across chunks', (_name, eol) => {
    const past = createAnswerCounter(true, 20);
    const event = `data: ${'x'.repeat(10)}${eol}${eol}`;
    for (let i = 0; i < 50; i++) expect(past(bytes(event))).toBe(false);
    // One event in many chunks, every line short: the event counts, not the line.
    expect(past(bytes(`data: 1234${eol}`))).toBe(false);
    expect(past(bytes(`data: 12`))).toBe(false);
    expect(past(bytes(`34${eol}data: 5`))).toBe(true);
  });
});
