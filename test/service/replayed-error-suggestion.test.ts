import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An MCP gateway user's probe: a side-effecting tool's error answer (an MCP isError result, an
// HTTP 4xx) is kept and replayed for the record's hour, yet the replay's suggestion was the first
// answer's: "if the tool itself failed (a server error), call again later", which only replays it
// again. A replayed error now says what the same call gets until the record expires and what
// reaches the tool. A real HTTP tool counting its runs.

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/locked': (_req, res) => void res.writeHead(409).end('locked, retry in 1s') });
  d = await startDispatch(`tools:
  - name: unlock
    effect: side_effect
    idempotency: { key_fields: ["/door"], ttl_seconds: 900 }
    http: { url: "${tools.url}/locked" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (id: string) => d.dispatch.dispatch({ sessionId: 's', calls: [{ id, name: 'unlock', arguments: '{"door":"front"}' }] }).then((r) => r.results[0]!);

test("a replayed error's suggestion says the same call returns it again, and what reaches the tool", async () => {
  const first = await call('c1');
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.suggestion).toMatch(/^Read the tool's error message/);
  const again = await call('c2');
  expect(again.idempotentReplay).toBe(true);
  expect(again.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(again.error?.suggestion).toBe(
    'The same call again returns this same answer, without reaching the tool, until its idempotency record expires (900 s). Read the error message: if it names something to correct, the corrected call is a new action and reaches the tool. Do not change the arguments only to get past this answer: that makes another action, not a retry, and may do it twice; otherwise check whether the action took effect and tell the user what failed.',
  );
  expect(JSON.parse(again.output).suggestion).toBe(again.error?.suggestion);
  expect(tools.count()).toBe(1);
});
