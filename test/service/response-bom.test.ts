import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolRoute, type ToolServer } from '../helpers/servers';

// A byte order mark at the start of an answer says its encoding, whatever the Content-Type's
// charset says (WHATWG Encoding "decode", what browsers and fetch's text() do). Java's "UTF-16"
// writes big-endian with a BOM under `charset=UTF-16`, which TextDecoder takes as little-endian;
// .NET writes UTF-16LE with a BOM and often no charset. Read by the label alone, the model got
// "￾栀氀氀漀" for "héllo". Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

const BOM_BE = Buffer.from([0xfe, 0xff]);
const BOM_LE = Buffer.from([0xff, 0xfe]);
const BOM_8 = Buffer.from([0xef, 0xbb, 0xbf]);
const be = (text: string) => Buffer.from(text, 'utf16le').swap16();
const answer = (status: number, contentType: string, ...parts: Buffer[]): ToolRoute => async (_req, res) => {
  res.writeHead(status, { 'content-type': contentType });
  // Each part its own chunk, apart in time: a BOM split across chunks is still one BOM.
  for (const part of parts) {
    res.write(part);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  res.end();
};

const ROUTES: Record<string, ToolRoute> = {
  java: answer(200, 'text/plain; charset=UTF-16', Buffer.concat([BOM_BE, be('héllo')])),
  dotnet: answer(200, 'application/json', Buffer.concat([BOM_LE, Buffer.from('{"a":"ü"}', 'utf16le')])),
  relabelled: answer(200, 'text/plain; charset=iso-8859-1', Buffer.concat([BOM_8, Buffer.from('café', 'utf8')])),
  split: answer(200, 'text/plain', BOM_BE.subarray(0, 1), Buffer.concat([BOM_BE.subarray(1), be('日本')])),
  short: answer(200, 'text/plain; charset=utf-16le', Buffer.from([0xff])),
  refused: answer(403, 'text/plain; charset=UTF-16', Buffer.concat([BOM_BE, be('accès refusé')])),
};

beforeAll(async () => {
  tools = await startToolServer(Object.fromEntries(Object.entries(ROUTES).map(([path, route]) => [`/${path}`, route])));
  const tool = (path: string) => `  - { name: t_${path}, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/${path}" } }\n`;
  d = await startDispatch(`tools:\n${Object.keys(ROUTES).map(tool).join('')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (path: string) => d.dispatch.dispatch({ sessionId: 'bom', calls: [{ id: 'c', name: `t_${path}`, arguments: '{}' }] }).then((r) => r.results[0]!);

test.each([
  ['java', 'héllo'],
  ['dotnet', '{"a":"ü"}'],
  ['relabelled', 'café'],
  ['split', '日本'],
  ['short', '\ufffd'],
])('the body of /%s is read in the encoding its BOM names, the BOM left out', async (path, text) => {
  const result = await call(path);
  expect(result.isError).toBe(false);
  expect(result.output).toBe(text);
});

test("an error answer's excerpt is decoded by its BOM too", async () => {
  const result = await call('refused');
  expect(result.error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(result.error?.message).toBe('the tool answered HTTP 403: accès refusé');
});
