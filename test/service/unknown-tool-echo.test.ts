// A made-up tool name is answered softly (UNKNOWN_TOOL, DESIGN section 3: the model can correct
// it), and that answer echoes the name: in the result's text (its error JSON, error.message,
// resolved_tool_name), in CALL_RECEIVED and the call's span. The echo is bounded (200 characters
// in the result, 256 in events) and, since this change, shows control and invisible or
// bidirectional characters escaped (`\u001b`): before, ESC, CR, LF and a right-to-left override
// went raw to the model, to subscribers and to terminals. No metrics series is made for the name
// (it counts as tool "_unknown"), and nothing logs it. ParseToolCalls returns a model's name as it
// was written (at most 256 characters, never whitespace or C0), so a parsed call with an invisible
// character in its name gets this same escaped soft answer. The real server on port 0.
import { DispatchMode, ErrorKind, EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../../src/log';
import { startApp, type TestDispatch } from '../helpers/servers';

jest.setTimeout(20_000);

/** Any control or invisible or bidirectional format character (src/events/terminal-text.ts's set). */
const RAW = /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\u{e0000}-\u{e007f}]/u;
const NAME = `lo\x1b[2J\u202eok\r\nINFO\u200b${'x'.repeat(3000)}`;
const SHOWN = 'lo\\u001b[2J\\u202eok\\u000d\\u000aINFO\\u200b';

const lines: string[] = [];
let metricsPort = 0;
const at = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  if (message === 'metrics serving') metricsPort = Number(fields?.port);
  lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
};
const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(`tools:\n  - name: lookup\n    effect: read_only\n    builtin: { name: echo }\n`, { logger, metricsListen: '127.0.0.1:0' });
});
afterAll(async () => d.close());

function expectSoftAndShown(result: { output: string; isError: boolean; resolvedToolName: string; error?: { kind: ErrorKind; message: string } }) {
  expect(result.isError).toBe(true);
  expect(result.error?.kind).toBe(ErrorKind.UNKNOWN_TOOL);
  const json = JSON.parse(result.output) as { tool: string; message: string };
  for (const text of [json.tool, json.message, result.error!.message, result.resolvedToolName]) {
    expect(text).not.toMatch(RAW);
    expect(text).toContain(SHOWN);
    expect(text.length).toBeLessThan(400);
  }
  expect(result.output.length).toBeLessThan(1_000);
}

test.each([
  ['sequential', DispatchMode.SEQUENTIAL, []],
  ['parallel', DispatchMode.PARALLEL, []],
  ['with offered_tools', DispatchMode.SEQUENTIAL, ['lookup']],
])('a 3,000-character made-up name (%s) is answered softly, cut and shown escaped', async (_what, mode, offeredTools) => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'echo', mode, offeredTools, calls: [{ id: 'c1', name: NAME, arguments: '{}' }] });
  expect(results).toHaveLength(1);
  expectSoftAndShown(results[0]!);
});

test('events and spans carry the name cut and escaped; no metrics series and no log line holds it', async () => {
  const events: Event[] = [];
  const stream = d.dispatch.subscribe({ sessionId: 'watched' });
  stream.on('data', (e: Event) => void events.push(e));
  stream.on('error', () => {});
  const deadline = Date.now() + 5_000;
  // The subscription is registered shortly after the stream opens: turn until its event arrives (bounded).
  while (!events.some((e) => e.kind === EventKind.CALL_RECEIVED) && Date.now() < deadline) {
    await d.dispatch.dispatch({ sessionId: 'watched', calls: [{ id: 'c1', name: NAME, arguments: '{}' }] });
    await new Promise((r) => setTimeout(r, 50));
  }
  stream.cancel();
  const received = events.filter((e) => e.kind === EventKind.CALL_RECEIVED);
  expect(received.length).toBeGreaterThan(0);
  for (const e of events) {
    for (const text of [e.tool, e.name, ...Object.values(e.attributes)]) {
      expect(text).not.toMatch(RAW);
      expect(text.length).toBeLessThan(2_000);
    }
  }
  expect(received[0]!.tool.startsWith(SHOWN)).toBe(true);
  expect(received[0]!.attributes['gen_ai.tool.name']!.startsWith(SHOWN)).toBe(true);

  const scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(scrape).not.toContain('xxxxxxxxxx');
  expect(scrape).not.toContain('lo\\u001b');
  expect(scrape).toMatch(/dispatch_tool_calls_total\{[^}]*tool="_unknown"[^}]*outcome="UNKNOWN_TOOL"/);
  expect(lines.filter((l) => l.includes('xxxxxxxxxx') || l.includes('INFO'))).toEqual([]);
});

test("ParseToolCalls returns a model's name as written; Dispatch answers a zero-width one softly, escaped; a 3,000-character one is not a call", async () => {
  const text = '<tool_call>{"name": "look\u200bup", "arguments": {}}</tool_call>';
  const parsed = await d.dispatch.parseToolCalls({ text, offeredTools: [] });
  expect(parsed.calls.map((c) => c.name)).toEqual(['look\u200bup']);
  const { results } = await d.dispatch.dispatch({ sessionId: 'parsed', calls: parsed.calls.map(({ id, name, arguments: a }) => ({ id, name, arguments: a })) });
  expect(results[0]!.error?.message).toBe('tool "look\\u200bup" not found; did you mean "lookup"?');
  expect(results[0]!.resolvedToolName).toBe('look\\u200bup');

  const long = await d.dispatch.parseToolCalls({ text: `<tool_call>{"name": "${'x'.repeat(3000)}", "arguments": {}}</tool_call>` });
  expect(long.calls).toEqual([]);
});
