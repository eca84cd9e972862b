import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// An HTTP tool's answer is decoded by the charset its Content-Type names, when TextDecoder knows
// it; UTF-8 otherwise. Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

const answer = (status: number, contentType: string, body: Buffer): ToolRoute => (_req, res) => void res.writeHead(status, { 'content-type': contentType }).end(body);

beforeAll(async () => {
  tools = await startToolServer({
    '/latin1': answer(200, 'text/plain; charset=ISO-8859-1', Buffer.from('café crème', 'latin1')),
    '/quoted': answer(200, 'text/plain;charset="utf-16le"', Buffer.from('naïve', 'utf16le')),
    '/sjis': answer(200, 'text/plain; charset=Shift_JIS', Buffer.from([0x93, 0xfa, 0x96, 0x7b])),
    '/unknown': answer(200, 'text/plain; charset=x-no-such-charset', Buffer.from('déjà vu', 'utf8')),
    '/plain': answer(200, 'application/json', Buffer.from('"ünïcode"', 'utf8')),
    '/refused': answer(403, 'text/plain; charset=iso-8859-1', Buffer.from('accès refusé', 'latin1')),
  });
  const tool = (path: string) => `  - { name: t_${path}, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/${path}" } }\n`;
  d = await startDispatch(`tools:\n${['latin1', 'quoted', 'sjis', 'unknown', 'plain', 'refused'].map(tool).join('')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (path: string) => d.dispatch.dispatch({ sessionId: 'cs', calls: [{ id: 'c', name: `t_${path}`, arguments: '{}' }] }).then((r) => r.results[0]!);

test.each([
  ['latin1', 'café crème'],
  ['quoted', 'naïve'],
  ['sjis', '日本'],
  ['unknown', 'déjà vu'],
  ['plain', '"ünïcode"'],
])('the body of /%s is read in its charset', async (path, text) => {
  const result = await call(path);
  expect(result.isError).toBe(false);
  expect(result.output).toBe(text);
});

test("an error answer's excerpt is decoded the same way", async () => {
  const result = await call('refused');
  expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(result.error?.message).toBe('the tool answered HTTP 403: accès refusé');
});
