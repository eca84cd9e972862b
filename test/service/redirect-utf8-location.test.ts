import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Servers (Go, Python, Java) send a Location with a non-ASCII path as its raw UTF-8 bytes, not
// percent-encoded. undici hands header values over as Latin-1, so a same-origin 307 to `/café`
// was followed to `/caf%C3%83%C2%A9` (the UTF-8 bytes read as Latin-1, encoded again): a 404,
// or another resource. Browsers and undici's own redirect mode read such a Location as UTF-8.
// Real gRPC server and loopback tool server.

let tools: ToolServer;
let d: TestDispatch;

// The UTF-8 bytes of the text as a Node header value (which Node writes as Latin-1, byte for byte).
const rawUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

beforeAll(async () => {
  tools = await startToolServer({
    '/search': (_req, res) => void res.writeHead(307, { location: rawUtf8('/café/検索?q=ü') }).end(),
    [`/caf${encodeURIComponent('é')}/${encodeURIComponent('検索')}?q=${encodeURIComponent('ü')}`]: (_req, res) => void res.end('moved here'),
    '/latin1': (_req, res) => void res.writeHead(307, { location: '/caf\xe9' }).end(),
    '/caf%C3%A9': (_req, res) => void res.end('latin1 here'),
  });
  const tool = (name: string) => `  - { name: ${name}, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${tools.url}/${name}" } }\n`;
  d = await startDispatch(`tools:\n${tool('search')}${tool('latin1')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (name: string) => d.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: 'c', name, arguments: '{}' }] }).then((r) => r.results[0]!);

test('a same-origin 307 whose Location is raw UTF-8 is followed to the URL it names', async () => {
  const result = await call('search');
  expect(result.error).toBeUndefined();
  expect(result.output).toBe('moved here');
});

test('a Location that is not UTF-8 is read as Latin-1, as before', async () => {
  const result = await call('latin1');
  expect(result.error).toBeUndefined();
  expect(result.output).toBe('latin1 here');
});
