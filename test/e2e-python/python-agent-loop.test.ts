// examples/python as an agent loop would copy them: one session across the turns (it ended the
// session after every turn, so no loop was ever seen), gRPC's retry policy on OVERLOADED, the hard
// error's ErrorInfo reason decoded, retry_after_ms waited, warnings, truncated results read whole,
// ParseToolCalls, results over 4 MiB, a clear message for a bad --calls, and a worker that stops
// when its tool's name is taken (it reconnected for ever, saying "hosting" each time).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { turnInFlight } from '../helpers/turn-in-flight';
import { describeWithPython, finished, runPython } from './python';

const EXAMPLE_TOOLS = readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8');
const echoTool = (name: string, extra = '') => `  - name: ${name}\n    effect: read_only\n    skip_memoize: true\n    input_schema: '{"type":"object"}'\n${extra}    builtin: { name: echo }\n`;
/** With `big` (an HTTP tool answering 900,000 characters), and responses of up to 16 MiB. */
const config = (bigUrl: string) => `${EXAMPLE_TOOLS}${echoTool('poll')}${echoTool('limited', '    retry: { max_backoff_ms: 100 }\n')}
  - name: big
    effect: read_only
    concurrency_safe: true
    max_result_chars: 2000000
    input_schema: '{"type":"object"}'
    http: { url: "${bigUrl}/big" }
policies:
  - match: limited
    rate: { per_second: 1, burst: 1, wait_ms: 0 }
limits:
  max_turns_in_flight: 1
  max_message_bytes: 16777216
  max_response_bytes: 16777216
`;
const calls = (...list: [id: string, name: string, args: unknown][]) => JSON.stringify(list.map(([id, name, args]) => ({ id, name, arguments: JSON.stringify(args) })));

describeWithPython('the Python examples in an agent loop', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  let tools: ToolServer;
  const stubDir = mkdtempSync(path.join(tmpdir(), 'py-stubs-'));
  const env = { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') };
  beforeAll(async () => {
    tools = await startToolServer({ '/big': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(900_000)) });
    t = await startApp(config(tools.url));
  });
  afterAll(async () => {
    await t.close();
    await tools.close();
    rmSync(stubDir, { recursive: true, force: true });
  });
  const backend = (args: string[]) => finished(runPython('backend.py', ['--address', t.address, ...args], env), 40_000);

  it('keeps one session across the turns: a model polling the same job is stopped LOOP_DETECTED, the reason decoded', async () => {
    const turns = Array.from({ length: 12 }, (_, i) => ['--calls', calls([`p${i + 1}`, 'poll', { job: 7 }])]).flat();
    const { code, out } = await backend(turns);
    expect(code).toBe(1);
    expect(out).toContain('-- turn 11\n');
    expect(out).toMatch(/dispatch failed: ABORTED LOOP_DETECTED: loop detected: poll returned the same result the last 10 times it was called with the same input/);
    expect(out).not.toContain('-- turn 12');
  }, 60_000);

  it('retries a turn refused OVERLOADED (the one turn in flight taken) until it gets in', async () => {
    const holder = await turnInFlight(t, 'holder', 1200);
    const { code, out } = await backend(['--calls', calls(['e', 'echo', { n: 1 }])]);
    expect(out).toBe('e ok tool=echo attempts=1: {"n":1}\n');
    expect(code).toBe(0);
    expect((await holder.done).results[0]!.isError).toBe(false);
  }, 60_000);

  it('waits retry_after_ms before the next turn, so the call the model makes again gets through', async () => {
    const { code, out } = await backend(['--calls', calls(['a', 'limited', {}], ['b', 'limited', {}]), '--calls', calls(['c', 'limited', {}])]);
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[2]).toMatch(/^b error UNAVAILABLE tool=limited attempts=1: .*is at its rate limit of 1 call per second/);
    const wait = Number(/^waiting (\d+) ms \(retry_after_ms\) before the next turn$/m.exec(out)?.[1]);
    // The next turn is ~1 s away: a turn sent at once (~ms later) would be refused again.
    expect(wait).toBeGreaterThan(750);
    expect(out).toContain(`  retry_after_ms: ${wait}\n`);
    expect(out).toContain('-- turn 2\nc ok tool=limited attempts=1: {}\n');
  }, 60_000);

  it('shows warnings, reads a truncated result whole with ReadResult, and parses tool calls out of a model text', async () => {
    const text = 'x'.repeat(20_000);
    const { code, out } = await backend([
      '--calls',
      JSON.stringify([{ id: 's', name: 'sleep', arguments: '{"ms": "10"}' }, { id: 'e', name: 'echo', arguments: JSON.stringify({ t: text }) }]),
      '--text',
      'Let me check. <tool_call>{"name": "echo", "arguments": {"a": 1}}</tool_call>',
    ]);
    expect(code).toBe(0);
    expect(out).toContain('s ok tool=sleep attempts=1: {"ms":10}\n  warning: repaired /ms: "10" -> 10 (string to number)\n');
    expect(out).toMatch(/\n {2}truncated: 20008 characters in all, read with ReadResult\n/);
    expect(out).toMatch(/-- turn 2\nparsed 1 call\(s\) from the text \(hermes\)\n\S+ ok tool=echo attempts=1: \{"a":1\}\n/);
  }, 60_000);

  it('receives a turn whose results pass 4 MiB (max_response_bytes raised)', async () => {
    const { code, out } = await backend(['--calls', calls(...Array.from({ length: 6 }, (_, i): [string, string, unknown] => [`b${i}`, 'big', {}]))]);
    const lines = out.split('\n');
    for (let i = 0; i < 6; i++) expect(lines.includes(`b${i} ok tool=big attempts=1: ${'x'.repeat(900_000)}`)).toBe(true);
    expect(code).toBe(0);
  }, 60_000);

  it('says what is wrong with a bad --calls (exit 2), with no traceback', async () => {
    const missing = await backend(['--calls', '[{"id": "a", "nme": "echo"}]']);
    expect(missing.code).toBe(2);
    expect(missing.out).toContain('backend.py: error: argument --calls: call 0 needs name, arguments as strings (arguments is the JSON text the model emitted), got {"id": "a", "nme": "echo"}');
    const broken = await backend(['--calls', '[{']);
    expect(broken.code).toBe(2);
    expect(broken.out).toMatch(/argument --calls: not JSON \(/);
    expect(missing.out + broken.out).not.toContain('Traceback');
  }, 60_000);
});

describeWithPython('the Python worker refused for good', () => {
  it("stops with the server's message when its tool's name is taken (ALREADY_EXISTS), never saying it hosts", async () => {
    const taken = await startApp(`${EXAMPLE_TOOLS}${echoTool('py_word_count')}`);
    const stubDir = mkdtempSync(path.join(tmpdir(), 'py-stubs-'));
    try {
      const worker = runPython('worker.py', ['--address', taken.address], { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') });
      const { code, out } = await finished(worker, 15_000);
      expect(out).toContain('stream refused: ALREADY_EXISTS: tools[0]: tool "py_word_count" is the operator\'s');
      expect(code).toBe(1);
      expect(out).not.toContain('hosting');
    } finally {
      await taken.close();
      rmSync(stubDir, { recursive: true, force: true });
    }
  }, 30_000);
});
