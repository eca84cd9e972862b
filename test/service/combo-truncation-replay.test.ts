import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Combinations: a side-effecting tool's truncated result (max_result_chars) replayed from its
// idempotency record; ReadResult of the replay's handle; EndSession then; a lenient tool's
// repaired call and the original keyed alike (idempotency and memoize).

jest.setTimeout(20_000);

let tools: ToolServer;
let d: TestDispatch;
const long = 'x'.repeat(300) + 'TAIL';

beforeAll(async () => {
  tools = await startToolServer({
    '/write': (_req, res) => void res.writeHead(200).end(long),
    '/look': (req, res) => void res.writeHead(200).end(`seen ${JSON.stringify(req.body.arguments)}`),
    '/send': (req, res) => void res.writeHead(200).end(`sent ${JSON.stringify(req.body.arguments)}`),
  });
  d = await startApp(`
tools:
  - { name: write, effect: side_effect, max_result_chars: 100, http: { url: "${tools.url}/write" } }
  - name: look
    effect: read_only
    concurrency_safe: true
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}'
    http: { url: "${tools.url}/look" }
  - name: send
    effect: side_effect
    concurrency_safe: true
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}'
    http: { url: "${tools.url}/send" }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

test('a truncated side-effecting result replayed: same bounded text, a handle that reads the whole text, until EndSession', async () => {
  const call = { id: 'w1', name: 'write', arguments: '{"a":1}' };
  const first = (await d.dispatch.dispatch({ sessionId: 'trunc', calls: [call] })).results[0]!;
  expect(first.truncated).toBe(true);
  expect(first.resultHandle).not.toBe('');
  const again = (await d.dispatch.dispatch({ sessionId: 'trunc', calls: [{ ...call, id: 'w2' }] })).results[0]!;
  expect(tools.count('/write')).toBe(1);
  expect(again.idempotentReplay).toBe(true);
  expect(again.truncated).toBe(true);
  expect(again.output).toBe(first.output);
  expect(again.resultHandle).not.toBe('');
  const page = await d.dispatch.readResult({ resultHandle: again.resultHandle, offset: 0, limit: 1000 });
  expect(page.text).toBe(long);
  await d.dispatch.endSession({ sessionId: 'trunc' });
  await expect(d.dispatch.readResult({ resultHandle: again.resultHandle, offset: 0, limit: 1000 })).rejects.toMatchObject({ code: 5 });
  const third = (await d.dispatch.dispatch({ sessionId: 'trunc', calls: [{ ...call, id: 'w3' }] })).results[0]!;
  expect(third.idempotentReplay).toBe(false);
  expect(tools.count('/write')).toBe(2);
});

test('a lenient side-effecting call repaired ("3" -> 3) keys as the call it was repaired into: replayed, in one parallel turn', async () => {
  const { results } = await d.dispatch.dispatch({
    sessionId: 'lenient-key',
    mode: DispatchMode.PARALLEL,
    calls: [
      { id: 's1', name: 'send', arguments: '{"n":"3"}' },
      { id: 's2', name: 'send', arguments: '{"n":3}' },
    ],
  });
  expect(results.map((r) => [r.toolCallId, r.isError ? ErrorKind[r.error!.kind] : r.idempotentReplay ? 'replayed' : 'ran'])).toEqual([
    ['s1', 'ran'],
    ['s2', 'replayed'],
  ]);
  expect(tools.count('/send')).toBe(1);
});

test('a lenient read-only call repaired and the original share one memo entry', async () => {
  const a = (await d.dispatch.dispatch({ sessionId: 'lenient-memo', calls: [{ id: 'l1', name: 'look', arguments: '{"n":"4"}' }] })).results[0]!;
  const b = (await d.dispatch.dispatch({ sessionId: 'lenient-memo', calls: [{ id: 'l2', name: 'look', arguments: '{"n":4}' }] })).results[0]!;
  expect(a.isError).toBe(false);
  expect(b.cached).toBe(true);
  expect(b.output).toBe(a.output);
  expect(tools.count('/look')).toBe(1);
});
