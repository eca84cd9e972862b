import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A number the tool would not get back as the model sent it (an id beyond 2^53, 1e999) is refused
// INVALID_ARGUMENTS and nothing runs: passed on, the tool deleted another record than the one
// named, and a call for another id was answered by the first one's replay (found in review).

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/delete': (req, res) => void res.writeHead(200).end(`deleted ${JSON.stringify(req.body.arguments)}`) });
  d = await startDispatch(`
tools:
  - name: delete
    effect: side_effect
    input_schema: '{"type":"object","properties":{"id":{"type":"integer"},"amount":{"type":"number","maximum":100}}}'
    http: { url: "${tools.url}/delete" }
  - name: lenient_delete
    effect: side_effect
    lenient_arguments: true
    input_schema: '{"type":"object","properties":{"id":{"type":"integer"},"amount":{"type":"number","maximum":100}},"required":["id"]}'
    http: { url: "${tools.url}/delete" }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (args: string, name = 'delete') => d.dispatch.dispatch({ sessionId: 'exact', calls: [{ id: 'c', name, arguments: args }] }).then((r) => r.results[0]!);

test('an integer id beyond 2^53 is refused, not rounded; nothing runs', async () => {
  const result = await call('{"id":1234567890123456789}');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toBe('the number 1234567890123456789 in the arguments cannot be passed on exactly (integers beyond ±9007199254740991 and numbers beyond ±1.8e308 would change); the tool was not executed');
  expect(result.error?.suggestion).toBe('Send such a number as a string, or use a smaller one.');
  const other = await call('{"id":1234567890123456788}');
  expect(other.idempotentReplay).toBe(false);
  expect(other.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(tools.count('/delete')).toBe(0);
});

test('-1e999 and a big id spelt with .0 are refused, not sent on as null or rounded', async () => {
  expect((await call('{"id":1234567890123456789.0}')).error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  const result = await call('{"amount":-1e999}');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(tools.count('/delete')).toBe(0);
});

test('a big id spelt with a point and a short exponent is refused, not run as its neighbour (found in review)', async () => {
  for (const args of ['{"id":9.007199254740993e15}', '{"id":900719925474099.3e1}']) {
    const result = await call(args);
    expect(result.error?.message).toBe(`the number ${args.slice(6, -1)} in the arguments cannot be passed on exactly (integers beyond ±9007199254740991 and numbers beyond ±1.8e308 would change); the tool was not executed`);
  }
  expect(tools.count('/delete')).toBe(0);
});

test('lenient repair does not turn an id string beyond 2^53 (however spelt), a hexadecimal one or an infinite one into another number', async () => {
  for (const args of ['{"id":"1234567890123456789"}', '{"id":"0x10"}', '{"id":"1234567890123456789e0"}', '{"id":1,"amount":"-5.E400"}']) {
    const result = await call(args, 'lenient_delete');
    expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  }
  expect(tools.count('/delete')).toBe(0);
  const repaired = await call('{"id":"42"}', 'lenient_delete');
  expect(repaired.output).toBe('deleted {"id":42}');
});

test('large numbers that come back as sent go through', async () => {
  const result = await call('{"id":9007199254740991}');
  expect(result.output).toBe('deleted {"id":9007199254740991}');
});
