import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A 200 answer whose body cannot be decoded (Content-Encoding: gzip, and not gzip) was reported
// UNAVAILABLE "connection failed mid-request (Z_DATA_ERROR)": a read-only call ran twice (a retry),
// and a side-effecting one was marked of unknown outcome. The tool was reached and answered, in
// breach of HTTP: UNEXPECTED, after it ran, never retried, and kept by the idempotency record.

jest.setTimeout(30_000);

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/bad': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end('not gzip at all') });
  const tool = (name: string, effect: string) => `  - name: ${name}
    effect: ${effect}${effect === 'read_only' ? '\n    skip_memoize: true' : ''}
    http: { url: "${tools.url}/bad" }
`;
  d = await startDispatch(`tools:\n${tool('read', 'read_only')}${tool('write', 'side_effect')}`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const call = (name: string, id: string) => d.dispatch.dispatch({ sessionId: 'gz', calls: [{ id, name, arguments: '{}' }] }).then((r) => r.results[0]!);

test('a read-only call whose answer cannot be decoded fails UNEXPECTED once, not retried', async () => {
  const before = tools.received.length;
  const result = await call('read', 'r1');
  expect(result.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, recoverable: false });
  expect(result.error!.message).toBe(`the tool at ${tools.url}/bad answered, but its body could not be decoded as its Content-Encoding says (Z_DATA_ERROR); the answer is lost`);
  expect(result.attempts).toBe(1);
  expect(tools.received.length - before).toBe(1);
});

test('a side-effecting one is kept as answered: an identical call replays it, not OUTCOME_UNKNOWN', async () => {
  const before = tools.received.length;
  const first = await call('write', 'w1');
  expect(first.error).toMatchObject({ kind: ErrorKind.UNEXPECTED, recoverable: false });
  const again = await call('write', 'w2');
  expect(again).toMatchObject({ idempotentReplay: true, error: { kind: ErrorKind.UNEXPECTED } });
  expect(tools.received.length - before).toBe(1);
});
