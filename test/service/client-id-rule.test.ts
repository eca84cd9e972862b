// Every id a client chooses follows the call id's rule (src/parse/client-id.ts): at most 256
// characters counted as code points, and no control character nor invisible or bidirectional
// format character. Before, session_id, approval_id and worker_id counted UTF-16 units (200 emoji
// were 400 characters: refused) and took ESC, CR, LF, a right-to-left override, which then reached
// logs, events, dispatchctl and Redis keys. The refusal is INVALID_ARGUMENT with ErrorInfo reason
// INVALID_ARGUMENT and the field. The real server on port 0.
import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { infoOf, failure } from '../contract/error-info';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { startWorkerApp } from '../workers/worker-app';
import { echoAnswer, startWorker } from '../workers/worker-harness';

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/hit': async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ran') });
  d = await startApp(`tools:\n  - name: hit\n    effect: read_only\n    skip_memoize: true\n    input_schema: '{"type":"object"}'\n    http: { url: "${tools.url}/hit" }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const RULE = 'may not hold control characters or invisible or bidirectional format characters';
const refused = (field: string, details: string) => ({ code: grpc.status.INVALID_ARGUMENT, details, reason: 'INVALID_ARGUMENT', metadata: { field } });
const turn = (sessionId: string) => d.dispatch.dispatch({ sessionId, calls: [{ id: 'c1', name: 'hit', arguments: '{}' }] });
const EMOJI_200 = '😀'.repeat(200);

test.each([
  ['ESC', 's\x1b[2J', 'U+001B at position 2'],
  ['LF', 'sess\nINFO forged', 'U+000A at position 5'],
  ['CR', 's\r', 'U+000D at position 2'],
  ['C1 CSI', 's\u009b31m', 'U+009B at position 2'],
  ['a right-to-left override', '😀\u202es', 'U+202E at position 2'],
  ['a zero-width space', 'se\u200bss', 'U+200B at position 3'],
])('a session_id holding %s is refused by Dispatch and EndSession, naming the field; nothing runs', async (_what, sessionId, where) => {
  const before = tools.count('/hit');
  const expected = refused('session_id', `session_id holds ${where}: a session id ${RULE}`);
  expect(await failure(turn(sessionId))).toMatchObject(expected);
  expect(await failure(d.dispatch.endSession({ sessionId }))).toMatchObject(expected);
  expect(tools.count('/hit')).toBe(before);
});

// Real-world ids hold joiners and soft hyphens between letters or emoji: before, ZWJ, ZWNJ and
// U+00AD were refused wherever they stood ("session_id holds U+200D at position 7").
test.each([
  ['a family emoji', 'chat-\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'],
  ['a rainbow flag', 'team-\u{1F3F3}\uFE0F\u200D\u{1F308}'],
  ['Persian with ZWNJ', '\u06AF\u0641\u062A\u06AF\u0648-\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645'],
  ['Hindi with ZWJ', '\u0915\u094D\u200D\u0937-chat'],
  ['a soft hyphen', 'Zusammen\u00ADarbeit'],
])('a session_id holding %s runs and ends', async (_what, sessionId) => {
  const { results } = await turn(sessionId);
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual([['c1', 'ran']]);
  await d.dispatch.endSession({ sessionId });
});

test.each([
  ['a ZWJ first', '\u200Dchat', 'U+200D at position 1'],
  ['a ZWNJ last', 'chat\u200C', 'U+200C at position 5'],
  ['two joiners in a row', 'a\u200D\u200Db', 'U+200D at position 2'],
  ['a soft hyphen before a ZWJ', 'a\u00AD\u200Db', 'U+00AD at position 2'],
  ['a ZWJ after a format character', 'a\u{1D173}\u200Db', 'U+1D173 at position 2'],
  ['U+180E', 'prod\u180E', 'U+180E at position 5'],
  ['U+0600', '\u0600prod', 'U+0600 at position 1'],
  ['U+0605', 'p\u0605', 'U+0605 at position 2'],
  ['U+06DD', 'p\u06DD', 'U+06DD at position 2'],
  ['U+070F', 'p\u070F', 'U+070F at position 2'],
  ['U+0890', 'p\u0890', 'U+0890 at position 2'],
  ['U+0891', 'p\u0891', 'U+0891 at position 2'],
  ['U+08E2', 'p\u08E2', 'U+08E2 at position 2'],
  ['U+110BD', 'p\u{110BD}', 'U+110BD at position 2'],
  ['U+110CD', 'p\u{110CD}', 'U+110CD at position 2'],
  ['U+13430', 'p\u{13430}', 'U+13430 at position 2'],
  ['U+1343F', 'p\u{1343F}', 'U+1343F at position 2'],
  ['U+1BCA0', '\u{1F600}\u{1BCA0}', 'U+1BCA0 at position 2'],
  ['U+1BCA3', 'p\u{1BCA3}', 'U+1BCA3 at position 2'],
  ['U+1D173', 'prod\u{1D173}', 'U+1D173 at position 5'],
  ['U+1D17A', 'p\u{1D17A}', 'U+1D17A at position 2'],
])('a session_id holding %s is refused by Dispatch and EndSession', async (_what, sessionId, where) => {
  const before = tools.count('/hit');
  const expected = refused('session_id', `session_id holds ${where}: a session id ${RULE}`);
  expect(await failure(turn(sessionId))).toMatchObject(expected);
  expect(await failure(d.dispatch.endSession({ sessionId }))).toMatchObject(expected);
  expect(tools.count('/hit')).toBe(before);
});

test('a session_id counts code points: 200 emoji (400 UTF-16 units) run and end; 257 emoji are refused as 257 characters', async () => {
  const { results } = await turn(EMOJI_200);
  expect(results.map((r) => [r.toolCallId, r.output])).toEqual([['c1', 'ran']]);
  await d.dispatch.endSession({ sessionId: EMOJI_200 });
  expect(await failure(turn('😀'.repeat(257)))).toMatchObject(refused('session_id', 'session_id is 257 characters long, over the limit of 256'));
  // Ending a session no turn may name is still OK (DESIGN section 2).
  await d.dispatch.endSession({ sessionId: '😀'.repeat(257) });
});

test('a Subscribe session_id filter follows the rule: a bidi one ends the stream INVALID_ARGUMENT; a 200-emoji one sees its turn', async () => {
  const bad = d.dispatch.subscribe({ sessionId: 'a\u202eb' });
  const status = await new Promise<grpc.StatusObject>((resolve) => {
    bad.on('error', () => {});
    bad.on('status', resolve);
  });
  expect(infoOf(status)).toMatchObject(refused('session_id', `session_id holds U+202E at position 2: a session id ${RULE}`));

  const good = d.dispatch.subscribe({ sessionId: EMOJI_200 });
  const seen: string[] = [];
  good.on('data', (event: { sessionId: string }) => void seen.push(event.sessionId));
  good.on('error', () => {});
  const deadline = Date.now() + 5_000;
  // The subscription is registered shortly after the stream opens: turn until one is seen (bounded).
  while (seen.length === 0 && Date.now() < deadline) {
    await turn(EMOJI_200);
    await new Promise((r) => setTimeout(r, 50));
  }
  good.cancel();
  expect(seen.length).toBeGreaterThan(0);
  expect(new Set(seen)).toEqual(new Set([EMOJI_200]));
});

test('ResolveApproval and ListApprovals: an approval_id or filter with a control character is refused naming its field; 256 emoji are taken', async () => {
  expect(await failure(d.dispatch.resolveApproval({ approvalId: 'id\r\n', approve: true }))).toMatchObject(refused('approval_id', `approval_id holds U+000D at position 3: an approval id ${RULE}`));
  expect(await failure(d.dispatch.resolveApproval({ approvalId: '😀'.repeat(257), approve: true }))).toMatchObject(refused('approval_id', 'approval_id is 257 characters long, over the limit of 256'));
  expect((await d.dispatch.resolveApproval({ approvalId: '😀'.repeat(256), approve: true })).resolved).toBe(false);
  expect(await failure(d.dispatch.listApprovals({ sessionId: 's\x1b' }))).toMatchObject(refused('session_id', `session_id holds U+001B at position 2: a session id ${RULE}`));
  expect(await failure(d.dispatch.listApprovals({ tool: 'hi\u200bt' }))).toMatchObject(refused('tool', `tool holds U+200B at position 3: a tool name ${RULE}`));
  expect((await d.dispatch.listApprovals({ sessionId: '😀'.repeat(1000) })).approvals).toEqual([]);
});

test("a worker's hello with a worker_id holding ESC is refused naming hello.worker_id; a 200-emoji worker_id is taken", async () => {
  const t = await startWorkerApp();
  const tool = { name: 'w_echo', inputSchema: '{"type":"object"}', effect: Effect.READ_ONLY };
  try {
    const bad = startWorker(t.address, { id: 'w\x1b]52;c;aGk=\x07', tools: [tool] });
    expect(infoOf(await bad.ended)).toMatchObject(refused('hello.worker_id', `worker_id holds U+001B at position 2: a worker id ${RULE}`));
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).not.toContain('w_echo');
    await t.worker({ id: EMOJI_200, tools: [tool], answer: echoAnswer('w') });
    expect((await t.registry.listTools({})).tools.map((x) => x.name)).toContain('w_echo');
  } finally {
    await t.close();
  }
});
