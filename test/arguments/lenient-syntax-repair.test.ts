import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';

// A Python agent author's probe: a lenient tool refused every argument text JSON.parse refuses,
// as models write them (a trailing comma, single quotes, Python's None, a code fence), while
// ParseToolCalls read the same text. A backend on native tool calls (OpenAI-style argument
// strings) got none of it. Now a lenient tool's arguments are read as ParseToolCalls reads them,
// with a warning; text cut off stays refused, as do strict tools. The tool records what it gets.

const received: string[] = [];
const record: ToolRoute = (request, response) => {
  received.push(JSON.stringify(request.body));
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
};

let tools: ToolServer;
let d: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  tools = await startToolServer({ '/search': record, '/send': record });
  const schema = `'{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"exact":{"type":"boolean"},"lang":{"type":["string","null"]}},"required":["query"]}'`;
  d = await startApp(`
tools:
  - { name: search, effect: read_only, lenient_arguments: true, skip_memoize: true, input_schema: ${schema}, http: { url: "${tools.url}/search" } }
  - { name: strict_search, effect: read_only, skip_memoize: true, input_schema: ${schema}, http: { url: "${tools.url}/search" } }
  - { name: send, effect: side_effect, lenient_arguments: true, input_schema: '{"type":"object","properties":{"to":{"type":"string"},"id":{"type":"integer"}},"required":["to"]}', http: { url: "${tools.url}/send" } }
`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

let n = 0;
const call = async (name: string, args: string, session = `s${++n}`) => (await d.dispatch.dispatch({ sessionId: session, calls: [{ id: `c${n}`, name, arguments: args }] })).results[0]!;
const lastReceived = () => (JSON.parse(received.at(-1)!) as { arguments: unknown }).arguments;

test.each([
  ['a trailing comma', '{"query": "oslo", "limit": 3,}', { query: 'oslo', limit: 3 }],
  ['single quotes', "{'query': 'oslo', 'exact': true}", { query: 'oslo', exact: true }],
  ["Python's literals", "{'query': 'oslo', 'exact': True, 'lang': None}", { query: 'oslo', exact: true, lang: null }],
  ['unquoted keys', '{query: "oslo", limit: 2}', { query: 'oslo', limit: 2 }],
  ['a code fence', '```json\n{"query": "oslo", "limit": 3,}\n```', { query: 'oslo', limit: 3 }],
  ['a raw line break in a string', '{"query": "oslo\nbergen"}', { query: 'oslo\nbergen' }],
])("a lenient tool's arguments with %s run, read as the model meant, and the result says so", async (_, args, expected) => {
  const result = await call('search', args);
  expect(result.isError).toBe(false);
  expect(lastReceived()).toEqual(expected);
  expect(result.warnings[0]).toMatch(/^repaired the arguments' syntax: they were not valid JSON/);
});

test('valid JSON carries no such warning', async () => {
  const result = await call('search', '{"query": "oslo"}');
  expect(result.isError).toBe(false);
  expect(result.warnings).toEqual([]);
});

test.each([
  ['an object left open where the text ends', '{"query": "oslo", "limit": 3'],
  ['a string cut off', '{"query": "osl'],
  ['a number at the very end', '{"query": "oslo", "limit": 3'],
  ['two objects', '{"query": "oslo"} {"query": "bergen"}'],
  ['no object', "'oslo'"],
  ['a fence holding two fences', '```\n{"query": "a"}\n```\n```\n{"query": "b"}\n```'],
])('text with %s stays refused: what the model meant is not known', async (_, args) => {
  const before = received.length;
  const result = await call('search', args);
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toMatch(/^arguments are not valid JSON/);
  expect(received.length).toBe(before);
});

test('a strict tool still refuses such text', async () => {
  const result = await call('strict_search', '{"query": "oslo",}');
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
});

test("an integer no double holds, in text read this way, is refused as in JSON (single-quoted text hid it from the first check)", async () => {
  const result = await call('send', "{'to': '12345678901234567890', 'id': 12345678901234567890}");
  expect(result.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
  expect(result.error?.message).toContain('12345678901234567890');
});

test("a side-effecting call's repaired text has the idempotency key of the same call in JSON: the second is replayed", async () => {
  const before = received.length;
  const first = await call('send', "{'to': 'ana@example.com', 'id': 7,}", 'same');
  const second = await call('send', '{"id": 7, "to": "ana@example.com"}', 'same');
  expect(first.isError).toBe(false);
  expect(second.idempotentReplay).toBe(true);
  expect(received.length).toBe(before + 1);
});

test('a parallel turn reads a lenient call the same way', async () => {
  const before = received.length;
  const response = await d.dispatch.dispatch({ sessionId: 'par', mode: DispatchMode.PARALLEL, calls: [{ id: 'a', name: 'search', arguments: "{'query': 'a'}" }, { id: 'b', name: 'search', arguments: '{"query": "b",}' }] });
  expect(response.results.map((r) => r.isError)).toEqual([false, false]);
  expect(received.slice(before).map((body) => (JSON.parse(body) as { arguments: unknown }).arguments)).toEqual(expect.arrayContaining([{ query: 'a' }, { query: 'b' }]));
});
