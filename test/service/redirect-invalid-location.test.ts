import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// A 307 whose Location does not parse (`http://[::1`) made `new URL` throw out of the executor:
// "the tool crashed: TypeError: Invalid URL", UNEXPECTED in phase during, so a side-effecting
// call's outcome was marked unknown and its re-call refused OUTCOME_UNKNOWN, though the tool only
// answered a redirect. It is the redirect refused "without a valid Location", TOOL_ERROR after,
// as one without a Location is. Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

beforeAll(async () => {
  tools = await startToolServer({ '/moved': (_req, res) => void res.writeHead(307, { location: 'http://[::1' }).end() });
  d = await startDispatch(`tools:\n  - { name: send, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/moved" } }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = () => d.dispatch.dispatch({ sessionId: 'loc', calls: [{ id: 'c', name: 'send', arguments: '{"to":"x"}' }] }).then((r) => r.results[0]!);

test('a redirect with a Location that does not parse is refused as a redirect: TOOL_ERROR after, and a re-call is not OUTCOME_UNKNOWN', async () => {
  const first = await call();
  expect(first.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(first.error?.message).toBe('the tool answered a redirect (HTTP 307) without a valid Location');
  expect(first.attempts).toBe(1);
  const again = await call();
  expect(again.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(tools.count('/moved')).toBe(1);
});
