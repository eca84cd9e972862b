import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Combinations: session budgets (policies budget:) with retries and fallback tools, then
// EndSession. docs/policies.md: a call counts once however many attempts; a fallback counts
// against its own budget once when it is another budget, and past it is refused BLOCKED; a
// fallback under the same budget is not counted again.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/ok': (req, res) => void res.writeHead(200).end(`ok ${req.body.tool as string}`) });
  const down = `http://127.0.0.1:${await closedPort()}/down`;
  d = await startApp(`
policies:
  - { match: ["send_*"], budget: { max_calls_per_session: 2 } }
  - { match: ["post_*"], budget: { max_calls_per_session: 1 } }
tools:
  - { name: send_a, effect: side_effect, retry: { max_attempts: 2, initial_backoff_ms: 10, jitter: 0 }, fallback_tool: post_b, http: { url: "${down}" } }
  - { name: post_b, effect: side_effect, http: { url: "${tools.url}/ok" } }
  - { name: send_c, effect: side_effect, retry: { max_attempts: 2, initial_backoff_ms: 10, jitter: 0 }, fallback_tool: send_d, http: { url: "${down}" } }
  - { name: send_d, effect: side_effect, http: { url: "${tools.url}/ok" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const one = (sessionId: string, name: string, n: number) => d.dispatch.dispatch({ sessionId, calls: [{ id: `c${n}`, name, arguments: JSON.stringify({ n }) }] }).then((r) => r.results[0]!);
const outcome = (r: Awaited<ReturnType<typeof one>>) => (r.isError ? ErrorKind[r.error!.kind] : r.output);

test('a retried call falling back to another budget counts once in each; the fallback past its budget is refused BLOCKED', async () => {
  const first = await one('budgets-x', 'send_a', 1);
  expect(outcome(first)).toBe('ok post_b');
  expect(first.attempts).toBe(3);
  const second = await one('budgets-x', 'send_a', 2);
  expect(outcome(second)).toBe('BLOCKED');
  expect(second.error!.message).toContain('post_*');
  const third = await one('budgets-x', 'send_a', 3);
  expect(outcome(third)).toBe('BLOCKED');
  expect(third.error!.message).toContain('send_*');
  expect(third.attempts).toBe(1);
  expect(tools.count('/ok')).toBe(1);
  await d.dispatch.endSession({ sessionId: 'budgets-x' });
  expect(outcome(await one('budgets-x', 'send_a', 4))).toBe('ok post_b');
});

test('a fallback under the same budget is not counted again', async () => {
  expect(outcome(await one('budgets-y', 'send_c', 1))).toBe('ok send_d');
  expect(outcome(await one('budgets-y', 'send_c', 2))).toBe('ok send_d');
  expect(outcome(await one('budgets-y', 'send_c', 3))).toBe('BLOCKED');
});
