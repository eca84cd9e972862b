import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// The second seed's _error_suggestion gives the model a concrete next step by HTTP status, not
// only by kind: 401 "Authentication failed. Check credentials. Do not retry with the same
// arguments."; 404 "The requested resource was not found. Verify the path/URL is correct." (its
// 429 step, wait before calling again, is service/rate-limited-tool's). DESIGN section 2: the
// suggestion is a concrete next step. Both had TOOL_ERROR's general "read the tool's error message".

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({
    '/auth': (_req, res) => void res.writeHead(401).end('invalid token'),
    '/missing': (_req, res) => void res.writeHead(404).end('no page /wiki/Osloo'),
  });
  const tool = (name: string, effect: string, path: string) => `
  - { name: ${name}, effect: ${effect}, input_schema: '{"type":"object"}', http: { url: "${tools.url}${path}" } }`;
  d = await startApp(`tools:${tool('fetch_auth', 'read_only', '/auth')}${tool('send_auth', 'side_effect', '/auth')}${tool('fetch_page', 'read_only', '/missing')}${tool('delete_page', 'side_effect', '/missing')}`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const failure = async (name: string) => {
  const { results } = await d.dispatch.dispatch({ sessionId: `s-${name}`, calls: [{ id: 'c1', name, arguments: '{"page":"Osloo"}' }] });
  return results[0]!;
};

test.each(['fetch_auth', 'send_auth'])('%s: a 401 tells the model the credentials failed and not to call again unchanged', async (name) => {
  const result = await failure(name);
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: 'the tool answered HTTP 401: invalid token', recoverable: false });
  expect(result.attempts).toBe(1);
  const suggestion = 'Authentication failed: the tool refused the credentials it was called with. Do not call it again with the same arguments; tell the user, or use another tool.';
  expect(result.error?.suggestion).toBe(suggestion);
  expect(JSON.parse(result.output).suggestion).toBe(suggestion);
});

test.each(['fetch_page', 'delete_page'])('%s: a 404 tells the model to verify the path or URL it asked for', async (name) => {
  const result = await failure(name);
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: 'the tool answered HTTP 404: no page /wiki/Osloo', recoverable: false });
  const suggestion = 'The requested resource was not found. Verify that the path, URL or identifier in the arguments is correct before calling again.';
  expect(result.error?.suggestion).toBe(suggestion);
  expect(JSON.parse(result.output).suggestion).toBe(suggestion);
});
