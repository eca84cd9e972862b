import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Combination: a policy `modify` that makes two side-effecting calls one call (docs/policies.md:
// "calls a policy makes identical ... are one call, the later ones replayed"), in a parallel
// turn. The planner reads idempotency keys from the arguments as sent, before any policy: the
// two calls shared a wave, and the second found the first's claim and failed IN_PROGRESS
// ("an identical call is still running"), where a sequential turn replays it. Through the real
// app, against a real HTTP tool that counts what it runs.

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({
    '/send': (req, res) => void setTimeout(() => res.writeHead(200).end(`sent to ${JSON.stringify(req.body.arguments)}`), 200),
  });
  d = await startApp(`
policies:
  - { match: send, decide: modify, set: { /to: ops }, reason: all mail goes to ops }
tools:
  - { name: send, effect: side_effect, concurrency_safe: true, idempotency: { key_fields: ["/to"] }, http: { url: "${tools.url}/send" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const outcomes = (results: { toolCallId: string; isError: boolean; error?: { kind: ErrorKind }; idempotentReplay: boolean }[]) =>
  results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'replayed' : 'ran']);

const calls = [
  { id: 'a', name: 'send', arguments: '{"to":"ann","body":"hi"}' },
  { id: 'b', name: 'send', arguments: '{"to":"bob","body":"hi"}' },
];

test('sequential: the calls a policy made one are one call, the later replayed', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'modify-seq', calls });
  expect(outcomes(results)).toEqual([
    ['a', 'ran'],
    ['b', 'replayed'],
  ]);
});

test('parallel: the same, not IN_PROGRESS', async () => {
  const before = tools.count('/send');
  const { results } = await d.dispatch.dispatch({ sessionId: 'modify-par', mode: DispatchMode.PARALLEL, calls });
  expect(outcomes(results)).toEqual([
    ['a', 'ran'],
    ['b', 'replayed'],
  ]);
  expect(results[1]!.output).toBe(results[0]!.output);
  expect(tools.count('/send')).toBe(before + 1);
});
