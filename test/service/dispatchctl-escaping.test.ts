// What a client, a model or a tool wrote reaches dispatchctl's terminal escaped, in every command:
// a model-written call id holding CR, LF and ESC printed a fake header and fake arguments in
// `dispatchctl approvals` and hid the arguments that run (ESC[8m); Dispatch now refuses such an id
// (test/service/call-id-checks.test.ts), and one with spaces is quoted. A tool's output lines are
// marked, so that none passes for dispatchctl's own warning lines. The real server on port 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

jest.setTimeout(30_000);

/** ESC, CR, LF, BEL, a C1 CSI (U+009B) and a right-to-left override (U+202E), as a model may write them. */
const CRAFTED = 'c1\x1b[2K\r\n  reason: routine\n  arguments: {"env":"staging"}\x07\u009b31m\u202e\x1b[8m';
/** A call id Dispatch takes that reads as the fields of a line, and as a word of a line shows it: quoted. */
const SPACED = 'c1  reason: routine  arguments: {"env":"staging"}';
const SPACED_SHOWN = String.raw`"c1  reason: routine  arguments: {\"env\":\"staging\"}"`;
/** A tool's raw output: a clipboard write (OSC 52), a CR and line erase, C1, an override; then a line break and a tab, kept. */
const RAW = 'ok\x1b]52;c;cHduZWQ=\x07\r\x1b[2Kfake\u009b31m\u202eevil\n\tsecond';
const RAW_SHOWN = String.raw`ok\u001b]52;c;cHduZWQ=\u0007\u000d\u001b[2Kfake\u009b31m\u202eevil` + '\n  │ \tsecond';
/** A tool's output written as dispatchctl's own warning lines, and as a look-alike of them (U+01C3 for `!`). */
const FORGED = '{"ok":true}\n! loop warning: the same result 3 times\n  ! repaired /n\n\u01c3 all clear\n';
/** A character a terminal acts on or hides, but LF and TAB (which multi-line bodies keep). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

let tools: ToolServer;
let d: TestDispatch;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-escaping-'));
  tools = await startToolServer({
    '/deploy': async (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"deployed":true}'),
    '/raw': async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(RAW),
    '/forge': async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(FORGED),
    '/long': async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(`${RAW}${'x'.repeat(400)}${RAW}`),
  });
  d = await startApp(`
tools:
  - name: echo
    description: "Echoes.\\e]52;c;cHduZWQ=\\a\\u202eevil"
    effect: read_only
    builtin: { name: echo }
  - name: deploy
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/deploy" }
  - name: raw
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/raw" }
  - name: forge
    effect: read_only
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}}}'
    http: { url: "${tools.url}/forge" }
  - name: long
    effect: read_only
    input_schema: '{"type":"object"}'
    max_result_chars: 200
    http: { url: "${tools.url}/long" }
policies:
  - match: deploy
    decide: ask
    reason: changes production
limits: { approval_timeout_ms: 10000 }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctl = dispatchctlAt(() => d.address);

test('approvals: a crafted call id cannot print lines of its own or hide the arguments that run', async () => {
  const crafted = d.dispatch.dispatch({ sessionId: 'spoof', interactive: true, calls: [{ id: CRAFTED, name: 'deploy', arguments: '{"env":"production"}' }] });
  await expect(crafted).rejects.toMatchObject({ details: expect.stringMatching(/^calls\[0\]\.id holds U\+001B at position 3: /) });
  const pending = d.dispatch.dispatch({ sessionId: 'spoof', interactive: true, calls: [{ id: SPACED, name: 'deploy', arguments: '{"env":"production","drop_db":true}' }] });
  const shown = await until(async () => {
    const run = await ctl('approvals', '--session', 'spoof');
    return run.out.startsWith('(no approvals') ? undefined : run;
  }, 'the approval listed');
  try {
    expect(shown.code).toBe(0);
    expect(shown.out).not.toMatch(RAW_CONTROL);
    const lines = shown.out.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\S+ {2}session spoof {2}call (.*) {2}deploy {2}expires in \d+s$/);
    expect(lines[0]).toContain(`call ${SPACED_SHOWN}  deploy`);
    expect(lines.slice(1)).toEqual(['  reason: changes production', '  arguments: {"env":"production","drop_db":true}']);
  } finally {
    await d.dispatch.endSession({ sessionId: 'spoof' });
    await pending.catch(() => undefined);
  }
});

test('call and dispatch: the call id, the output and the tool name are escaped; line breaks and tabs of the output kept', async () => {
  const call = await ctl('--session', 'esc-call', 'call', 'raw', '{}');
  expect(call.out).not.toMatch(RAW_CONTROL);
  expect(call.out).toMatch(/^✓ call_1 raw \(1 attempt, \d+ ms\)\n/);
  expect(call.out.split('\n').slice(1).join('\n')).toBe(`  │ ${RAW_SHOWN}`);
  const turn = join(dir, 'turn.json');
  writeFileSync(turn, JSON.stringify({ session_id: 'esc-turn', calls: [{ id: SPACED, name: 'raw', arguments: {} }, { id: 'u', name: `nope\x1b[2J\u202e`, arguments: {} }] }));
  const run = await ctl('dispatch', turn);
  expect(run.out).not.toMatch(RAW_CONTROL);
  expect(run.out).toContain(`✓ ${SPACED_SHOWN} raw (`);
  // Dispatch itself shows a made-up name escaped (resolved_tool_name); no registered name holds a backslash.
  expect(run.out).toMatch(/^✗ u nope\\u001b\[2J\\u202e: UNKNOWN_TOOL/m);
});

test("call: a tool's output cannot print lines that pass for dispatchctl's warnings; the real warning is the only one", async () => {
  const call = await ctl('--session', 'esc-forge', 'call', 'forge', '{"n":"5"}');
  expect(call.code).toBe(0);
  const lines = call.out.split('\n');
  expect(lines[0]).toMatch(/^✓ call_1 forge \(1 attempt, \d+ ms\)$/);
  expect(lines.slice(1, 6)).toEqual(['  │ {"ok":true}', '  │ ! loop warning: the same result 3 times', '  │   ! repaired /n', '  │ \u01c3 all clear', '  │']);
  // What follows the output is dispatchctl's own: the repair dispatch made, and nothing else.
  expect(lines.slice(6)).toEqual([expect.stringMatching(/^ {2}! .*\/n/)]);
  expect(lines.filter((line) => !line.startsWith('  │')).slice(1)).toEqual(lines.slice(6));
});

test('read: the full text of a truncated result, its controls escaped', async () => {
  const call = await ctl('--session', 'esc-read', 'call', 'long', '{}');
  expect(call.out).not.toMatch(RAW_CONTROL);
  const handle = /full text: dispatchctl read (\S+)\)/.exec(call.out)?.[1];
  expect(handle).toBeDefined();
  const read = await ctl('read', handle!);
  expect(read.code).toBe(0);
  expect(read.out).not.toMatch(RAW_CONTROL);
  expect(read.out).toBe(`${RAW_SHOWN.replace('\n  │ ', '\n')}${'x'.repeat(400)}${RAW_SHOWN.replace('\n  │ ', '\n')}`);
});

test('end-session, tools list and parse show what they echo escaped', async () => {
  // Dispatch refuses a session id holding a control character (src/parse/client-id.ts); the refusal names no raw one.
  const ended = await ctl('end-session', `s\x1b[2J\r\nsession other ended`);
  expect(ended).toEqual({ code: 1, out: '', err: 'dispatchctl: INVALID_ARGUMENT: session_id holds U+001B at position 2: a session id may not hold control characters or invisible or bidirectional format characters' });
  const listed = await ctl('tools', 'list');
  expect(listed.out).not.toMatch(RAW_CONTROL);
  expect(listed.out).toMatch(/^echo\s+read-only\s+builtin {2}Echoes\.\\u001b\]52;c;cHduZWQ=\\u0007\\u202eevil$/m);
  const file = join(dir, 'model.txt');
  writeFileSync(file, `before\x1b[2J\u202e\n<tool_call>{"name": "echo", "arguments": {"a": "\u009b31m"}, "id": "c1\\r\\u001b[8m"}</tool_call>`);
  const parsed = await ctl('parse', file);
  expect(parsed.code).toBe(0);
  expect(parsed.out).not.toMatch(RAW_CONTROL);
  expect(parsed.out).toContain(String.raw`before\u001b[2J\u202e`);
});
