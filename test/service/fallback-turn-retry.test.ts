import { createServer, type Server } from 'node:http';
import { closedPort, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Found in a pipeline review: a side-effecting call whose tool could not be reached (nothing sent,
// its claim given back) and that fell back to its `fallback_tool` was recorded under the
// fallback's idempotency key alone. The client's retry of the turn (its answer lost, a hard error
// of another call, a replica draining: "the calls that ran are replayed") sent the same call
// again: its own key had no record, its tool was reachable again, and it did the action the
// fallback had done: the email went out twice. A call's key is the call's, whichever tool runs it.
// Real HTTP tools that count what reaches them.

let backup: ToolServer;
let d: TestDispatch;
let port: number;
let primary: Server | undefined;
let primaryHits = 0;

beforeAll(async () => {
  port = await closedPort();
  backup = await startToolServer({ '/backup': (_req, res) => void res.writeHead(200).end('sent by backup') });
  d = await startApp(`
tools:
  - name: send
    effect: side_effect
    fallback_tool: backup_send
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "http://127.0.0.1:${port}/send" }
  - name: backup_send
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${backup.url}/backup" }
`);
});
afterAll(async () => {
  await d.close();
  await backup.close();
  primary?.closeAllConnections();
  await new Promise<void>((resolve) => (primary ? primary.close(() => resolve()) : resolve()));
});

const turn = async () => (await d.dispatch.dispatch({ sessionId: 'fallback-retry', turn: 1, calls: [{ id: 'c1', name: 'send', arguments: '{"to":"bob"}' }] })).results[0]!;

test("a turn retried after its side-effecting call fell back replays the fallback's result: the action is not done again", async () => {
  const first = await turn();
  expect(first).toMatchObject({ isError: false, output: 'sent by backup', resolvedToolName: 'backup_send' });
  expect(backup.count('/backup')).toBe(1);
  // The primary is reachable again when the client retries the turn.
  primary = createServer((_req, res) => {
    primaryHits++;
    res.writeHead(200).end('sent by primary');
  });
  await new Promise<void>((resolve) => primary!.listen(port, '127.0.0.1', resolve));
  const again = await turn();
  expect(primaryHits + backup.count('/backup')).toBe(1);
  expect(again).toMatchObject({ isError: false, output: 'sent by backup', idempotentReplay: true });
});
