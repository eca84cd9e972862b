// Where a tenant's HTTP tool may point (registry: { http_allow, http_deny }): refused at
// registration when the URL's address or host is denied, and at connect time when the address a
// name resolves to is (DNS rebinding: `localhost` stands for a name that now resolves to a denied
// address). The operator's tools from the config file are not checked.
import { status, type ServiceError } from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

let tools: ToolServer;
let open: TestDispatch;
let strict: TestDispatch;
let allowlist: TestDispatch;
const port = () => new URL(tools.url).port;

beforeAll(async () => {
  tools = await startToolServer({ '/t': json({ ok: true }) });
  const operatorTool = `tools:\n  - name: operator_tool\n    effect: read_only\n    http: { url: "${tools.url}/t" }\n`;
  open = await startDispatch(operatorTool);
  strict = await startDispatch(`${operatorTool}registry:\n  http_deny: [loopback]\n`);
  allowlist = await startDispatch('registry:\n  http_allow: [localhost]\n');
});
afterAll(async () => {
  await Promise.all([open, strict, allowlist].map((d) => d.close()));
  await tools.close();
});

const httpTool = (name: string, url: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', retry: { maxAttempts: 3 }, executor: { case: 'http' as const, value: { url, headers: {} } } });
const refusal = (promise: Promise<unknown>) => promise.then(() => ({ code: 'ok', details: '' }), (e: ServiceError) => ({ code: e.code, details: e.details }));
const run = async (d: TestDispatch, name: string) => (await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] })).results[0]!;

test('the metadata endpoint, in any spelling, is refused at registration by default; nothing of the request is registered', async () => {
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://2852039166/']) {
    const answer = await refusal(open.registry.registerTools({ tools: [httpTool('fine', `${tools.url}/t`), httpTool('meta', url)] }));
    expect(answer).toEqual({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/^tools\[1\] \("meta"\): http\.url's host .+ is denied by the built-in rule 169\.254\.0\.0\/16 \(link-local, cloud metadata\)$/) });
  }
  const answer = await refusal(open.registry.registerTools({ tools: [httpTool('meta', 'http://169.254.169.254/latest/meta-data/')] }));
  expect(answer.details).toBe('tools[0] ("meta"): http.url\'s host 169.254.169.254 is denied by the built-in rule 169.254.0.0/16 (link-local, cloud metadata)');
  expect((await open.registry.listTools({})).tools.map((t) => t.name)).toEqual(['operator_tool']);
});

test('by default (no registry: section) a tenant may register and call a loopback tool, as the embedded default needs', async () => {
  await open.registry.registerTools({ tools: [httpTool('local', `${tools.url}/t`)] });
  expect((await run(open, 'local')).output).toBe('{"ok":true}');
});

test('http_deny: [loopback] refuses a loopback address at registration, with the rule in the message', async () => {
  const answer = await refusal(strict.registry.registerTools({ tools: [httpTool('local', `${tools.url}/t`)] }));
  expect(answer).toEqual({ code: status.INVALID_ARGUMENT, details: 'tools[0] ("local"): http.url\'s host 127.0.0.1 is denied by registry.http_deny "loopback"' });
  const v6 = await refusal(strict.registry.registerTools({ tools: [httpTool('local6', 'http://[::1]:8/')] }));
  expect(v6.details).toBe('tools[0] ("local6"): http.url\'s host [::1] is denied by registry.http_deny "loopback"');
});

test('a name that resolves to a denied address is refused when the tool connects: BLOCKED, phase before, not retried, nothing sent', async () => {
  const before = tools.count();
  await strict.registry.registerTools({ tools: [httpTool('rebound', `http://localhost:${port()}/t`)] });
  const result = await run(strict, 'rebound');
  expect(result.isError).toBe(true);
  const error = JSON.parse(result.output) as { kind: string; message: string };
  expect(error).toMatchObject({ kind: 'BLOCKED', recoverable: false, attempts: 1, retried: false });
  expect(error.message).toMatch(new RegExp(`^dispatch refused to connect to the tool at http://localhost:${port()}/t: (127\\.0\\.0\\.1|::1) \\(for localhost\\) is denied by registry\\.http_deny "loopback"; nothing was sent$`));
  expect(tools.count()).toBe(before);
});

test("the operator's tools from the config file are not checked", async () => {
  expect((await run(strict, 'operator_tool')).output).toBe('{"ok":true}');
});

test('http_allow: [localhost] allows that name alone: a literal address is refused at registration', async () => {
  const answer = await refusal(allowlist.registry.registerTools({ tools: [httpTool('literal', `${tools.url}/t`)] }));
  expect(answer).toEqual({ code: status.INVALID_ARGUMENT, details: 'tools[0] ("literal"): http.url\'s host 127.0.0.1 is denied by registry.http_allow (it is not listed there)' });
  const other = await refusal(allowlist.registry.registerTools({ tools: [httpTool('other', 'http://tools.example.com/')] }));
  expect(other.details).toBe('tools[0] ("other"): http.url\'s host tools.example.com is denied by registry.http_allow (it is not listed there)');
  await allowlist.registry.registerTools({ tools: [httpTool('named', `http://localhost:${port()}/t`)] });
  expect((await run(allowlist, 'named')).output).toBe('{"ok":true}');
});
