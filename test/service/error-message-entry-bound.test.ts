import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { MAX_ERROR_MESSAGE_CHARS } from '../../src/errors';
import { codePointLength } from '../../src/pipeline/bound-result';
import { callLog } from '../mcp/mcp-harness';
import { tapEvents, turnEnded } from '../events/event-tap';
import { startApp, type TestDispatch } from '../helpers/servers';
import { eventually } from '../workers/worker-harness';

// A failed call's message is held to MAX_ERROR_MESSAGE_CHARS where the failure enters the call:
// an MCP server's JSON-RPC error quoted a megabyte its tool threw, and the call's ToolError, its
// idempotency record (replayed for its TTL) and every replay carried all of it.

/** What the server's "long" tool throws: 750,000 code points, an emoji every third. */
const LONG = 'ab\u{1F600}'.repeat(250_000);
const PREFIX = 'MCP server "failing" answered an error: MCP error -32603: ';
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A long text as a failed assertion shows it. */
const brief = (text: string) => `${text.length} units: ${text.slice(0, 60)}...${text.slice(-40)}`;

let d: TestDispatch;
const log = callLog();

beforeAll(async () => {
  const mcp = JSON.stringify({ name: 'failing', command: [process.execPath, path.join(__dirname, 'fixtures/long-error-mcp.js')], env: { CALL_LOG: log.file } });
  d = await startApp(`
tools: []
mcp_servers:
  - ${mcp}
`);
  await eventually(async () => (await d.registry.listTools({})).tools.some((x) => x.name === 'failing_long'), 10_000, 'the MCP tools');
});
afterAll(() => d?.close());

const call = (name: string, session: string) => d.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name, arguments: '{}' }] }).then((r) => r.results[0]!);

test("a megabyte JSON-RPC error is held to the bound, with a marker counting the rest, in the ToolError, its record's replay and the events", async () => {
  const tap = await tapEvents(d.address, { sessionId: 'long' });
  try {
    const first = await call('failing_long', 'long');
    expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
    const message = first.error!.message;
    const whole = codePointLength(PREFIX + LONG);
    const expected = `${PREFIX}${Array.from(LONG).slice(0, MAX_ERROR_MESSAGE_CHARS - codePointLength(PREFIX)).join('')} ... [${whole - MAX_ERROR_MESSAGE_CHARS} characters omitted]`;
    expect(brief(message)).toBe(brief(expected));
    expect(message === expected).toBe(true);
    expect(LONE.test(message)).toBe(false);
    // The output JSON is its tool's max_result_chars as before (bound-error.ts).
    expect(JSON.parse(first.output)).toMatchObject({ error: true, kind: 'TOOL_ERROR' });

    const again = await call('failing_long', 'long');
    expect(again.idempotentReplay).toBe(true);
    expect(again.error!.message === expected).toBe(true);
    expect(again.output).toBe(first.output);
    expect(log.lines()).toEqual(['long']);

    await tap.waitFor(turnEnded('long', 2));
    const longest = Math.max(...tap.events.flatMap((e) => Object.values(e.attributes).map((value) => value.length)));
    expect(longest).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
  } finally {
    tap.close();
  }
});

test('a short JSON-RPC error stays whole, the first time and replayed', async () => {
  const first = await call('failing_short', 'short');
  expect(first.error?.message).toBe(`${PREFIX}the queue is full`);
  const again = await call('failing_short', 'short');
  expect(again.idempotentReplay).toBe(true);
  expect(again.error?.message).toBe(`${PREFIX}the queue is full`);
});
