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
    '/forbidden': (_req, res) => void res.writeHead(403).end('read-only token'),
    '/broken': (_req, res) => void res.writeHead(500).end('NullPointerException'),
    '/gateway': (_req, res) => void res.writeHead(504).end('upstream timed out'),
    '/slow-request': (_req, res) => void res.writeHead(408).end('request timeout'),
  });
  const tool = (name: string, effect: string, path: string) => `
  - { name: ${name}, effect: ${effect}, input_schema: '{"type":"object"}', http: { url: "${tools.url}${path}" } }`;
  d = await startApp(`tools:${tool('fetch_auth', 'read_only', '/auth')}${tool('send_auth', 'side_effect', '/auth')}${tool('fetch_page', 'read_only', '/missing')}${tool('delete_page', 'side_effect', '/missing')}${tool('edit_page', 'read_only', '/forbidden')}${tool('broken_search', 'read_only', '/broken')}${tool('gateway_search', 'read_only', '/gateway')}${tool('slow_search', 'read_only', '/slow-request')}${tool('broken_send', 'side_effect', '/broken')}`);
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

test('a 403 tells the model the credentials may not do this, and not to call again unchanged', async () => {
  const result = await failure('edit_page');
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: 'the tool answered HTTP 403: read-only token', recoverable: false });
  expect(result.error?.suggestion).toBe('The tool refused this action to the credentials it was called with. Do not call it again with the same arguments; tell the user, or use another tool.');
});

// A 5xx or a 408 is the tool's failure, not the request's: TOOL_ERROR's default left the model
// to wonder whether to change its arguments.
test.each([
  ['broken_search', 500, 'NullPointerException'],
  ['gateway_search', 504, 'upstream timed out'],
  ['slow_search', 408, 'request timeout'],
])('%s: HTTP %d says the tool failed, not the request, after the retry', async (name, status, body) => {
  const result = await failure(name);
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, message: `the tool answered HTTP ${status}: ${body}`, recoverable: true });
  expect(result.attempts).toBe(2);
  expect(result.error?.suggestion).toBe(`The tool itself failed (HTTP ${status}), not the request: do not change the arguments for it. Call it again later, unchanged, or use another tool meanwhile.`);
});

test('a side-effecting 500 kept by its idempotency record says the same call is replayed, not to call again unchanged', async () => {
  const result = await failure('broken_send');
  expect(result.error).toMatchObject({ kind: ErrorKind.TOOL_ERROR, recoverable: false });
  expect(result.error?.suggestion).toMatch(/^The same call again returns this same answer, without reaching the tool, until its idempotency record expires/);
});
