import { parse } from 'yaml';
import { ConfigError } from '../../src/config';
import { parsePolicies } from '../../src/guards';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Found by a user probe: `authorization: "Bearer ${POLICY_TOKEN}"` in the policy endpoint's headers
// reached the policy service as written, while an HTTP tool's and an MCP server's `${NAME}` are
// read from the environment. The endpoint's `url` and `headers` now are too, by the same rule: a
// variable not set or set empty is refused naming the field and the variable (never a value), and
// `$${` is a `${` as written. The policy service is a real HTTP server on 127.0.0.1:0.

jest.setTimeout(20_000);

const ENV = { POLICY_TOKEN_T: 'tok-from-a-secret', POLICY_EMPTY_T: '' };
const saved = { ...process.env };
let policy: ToolServer;
beforeAll(async () => {
  policy = await startToolServer({ '/policy': json({ decision: 'allow' }) });
  Object.assign(process.env, ENV, { POLICY_BASE_T: policy.url });
});
afterAll(async () => {
  for (const key of [...Object.keys(ENV), 'POLICY_BASE_T']) delete process.env[key];
  Object.assign(process.env, saved);
  await policy.close();
});

const config = (endpoint: string) => `
tools:
  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
policies:
  - match: "*"
    endpoint: ${endpoint}
`;

test('the endpoint is reached at the url read from the environment, with the header read from it; $${ is sent as ${', async () => {
  const d = await startApp(config('{ url: "${POLICY_BASE_T}/policy", headers: { authorization: "Bearer ${POLICY_TOKEN_T}", x-note: "costs $5, literal $${POLICY_TOKEN_T}" } }'));
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"a":1}' }] });
    expect(results[0]!.isError).toBe(false);
    expect(policy.count('/policy')).toBe(1);
    const headers = policy.received[0]!.headers;
    expect(headers.authorization).toBe('Bearer tok-from-a-secret');
    expect(headers['x-note']).toBe('costs $5, literal ${POLICY_TOKEN_T}');
  } finally {
    await d.close();
  }
});

test.each([
  ['a header naming a variable not set', '{ url: "${POLICY_BASE_T}/policy", headers: { authorization: "Bearer ${POLICY_NOT_SET_T}" } }', 'test.yaml: policies[0].endpoint.headers.authorization: ${POLICY_NOT_SET_T} names a variable not set in the environment'],
  ['a header naming a variable set empty', '{ url: "${POLICY_BASE_T}/policy", headers: { authorization: "Bearer ${POLICY_EMPTY_T}" } }', 'test.yaml: policies[0].endpoint.headers.authorization: ${POLICY_EMPTY_T} names a variable set empty in the environment'],
  ['a url naming a variable not set', '{ url: "${POLICY_NOT_SET_T}/policy" }', 'test.yaml: policies[0].endpoint.url: ${POLICY_NOT_SET_T} names a variable not set in the environment'],
  ['a "${" naming no variable', '{ url: "${POLICY_BASE_T}/policy", headers: { x-a: "${ oops }" } }', 'test.yaml: policies[0].endpoint.headers.x-a: holds a "${" that names no variable'],
])('%s is refused at start, naming the field and the variable', async (_, endpoint, refusal) => {
  const started = startApp(config(endpoint));
  await expect(started).rejects.toThrow(ConfigError);
  await expect(started).rejects.toThrow(refusal);
  expect(policy.count('/policy')).toBe(1);
});

test('a refusal never shows a value read from the environment', () => {
  const env = { BASE: 'ftp://user:s3cret@example.test', TOKEN: 's3cret' };
  const policies = (endpoint: string) => parsePolicies(parse(`- { match: "*", endpoint: ${endpoint} }`) as unknown[], 'dispatch.yaml', env);
  expect(() => policies('{ url: "${BASE}/policy" }')).toThrow('dispatch.yaml: policies[0].endpoint.url: must be an http or https URL, got "${BASE}/policy"');
  expect(() => policies('{ url: "${BASE}/policy" }')).not.toThrow(/s3cret/);
  expect(policies('{ url: "http://127.0.0.1:1/p?k=${TOKEN}", headers: { a: "${TOKEN}", b: "x" }, timeout_ms: 50 }').endpoint).toMatchObject({ url: 'http://127.0.0.1:1/p?k=s3cret', headers: { a: 's3cret', b: 'x' } });
});
