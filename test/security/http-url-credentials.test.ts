import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { closedPort, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// An operator's tool URL may carry its credentials: user info (`https://user:pass@host/`, which
// ListTools shows redacted) or an API key in the query. fetch refuses a URL with user info
// ("Request cannot be constructed from a URL that includes credentials"): every call of such a tool
// failed UNAVAILABLE without a request, and the message handed to the model, of any tenant, named
// the password. The user info is sent as the Basic authorization it stands for (curl's and Node
// http's reading), and error messages name the URL as ListTools names an operator's tool to
// every tenant: without user info, query, or path past its first segment.
// Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;
let closed: number;

beforeAll(async () => {
  tools = await startToolServer({ '/r': (_req, res) => void res.end('ok'), '/r?x=1': (_req, res) => void res.end('ok') });
  closed = await closedPort();
  const host = tools.url.slice('http://'.length);
  const tool = (name: string, url: string, extra = '') => `  - { name: ${name}, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${url}"${extra} } }\n`;
  d = await startDispatch(
    `tools:\n${tool('report', `http://reports:hun%20ter2%C3%A9@${host}/r?x=1`)}${tool('bearer', `http://reports:hunter2@${host}/r`, ', headers: { Authorization: "Bearer abc" }')}${tool('down', `http://reports:hunter2@127.0.0.1:${closed}/hooks/T0/B0SECRETPATH?key=AIzaSyD-OPERATOR-SECRET-KEY`)}`,
  );
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string) => d.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: 'c', name, arguments: '{}' }] }).then((r) => r.results[0]!);

test("a tool URL's user info is sent as Basic authorization, not in the URL, and the call runs", async () => {
  const result = await call('report');
  expect(result.error).toBeUndefined();
  expect(result.output).toBe('ok');
  const received = tools.received.at(-1)!;
  expect(received.path).toBe('/r?x=1');
  expect(received.headers.authorization).toBe(`Basic ${Buffer.from('reports:hun ter2é').toString('base64')}`);
});

test('a configured Authorization header wins over the user info', async () => {
  const result = await call('bearer');
  expect(result.output).toBe('ok');
  expect(tools.received.at(-1)!.headers.authorization).toBe('Bearer abc');
});

test("an unreachable tool's error names its URL without its user info, query or path past its first segment", async () => {
  const result = await call('down');
  expect(result.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(result.error?.message).toBe(`could not reach the tool at http://127.0.0.1:${closed}/hooks/[redacted]?[redacted] (ECONNREFUSED)`);
  expect(result.output).not.toMatch(/hunter2|AIzaSy|SECRETPATH/);
});
