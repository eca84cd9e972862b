import { startToolServer, json, type ToolRoute, type ToolServer } from '../helpers/servers';
import { errorJson, startGuardedApp } from '../guards/helpers';

const SECRETS: Record<string, string> = {
  bearer: 'Authorization: Bearer abcDEF123456789xyz',
  api_key: 'api_key=abcd1234efgh5678',
  aws_access_key: 'AKIAIOSFODNN7EXAMPLE',
  aws_secret_key: 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  github_token: 'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB',
  slack_token: 'xoxb-1234567890-0987654321-AbCdEfGhIjKl',
  high_entropy: '9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q',
};
const SECRET_VALUES = ['abcDEF123456789xyz', 'abcd1234efgh5678', 'AKIAIOSFODNN7EXAMPLE', 'wJalrXUtnFEMI', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7', 'dozjgNryP4J3jVmNHl0w5N', 'ghp_1234567890', 'xoxb-1234567890', '9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q'];

describe('middleware through the gRPC service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  const store = new Map<string, string>();
  const readFile: ToolRoute = (req, res) => void res.writeHead(200).end(store.get((req.body.arguments as { path: string }).path) ?? 'missing');
  const writeFile: ToolRoute = (req, res) => {
    const { path, text } = req.body.arguments as { path: string; text: string };
    store.set(path, text);
    res.writeHead(200).end('written');
  };
  beforeEach(async () => {
    store.clear();
    store.set('/a', 'A1');
    store.set('/b', 'B1');
    tools = await startToolServer({
      '/leaky': (_req, res) => void res.writeHead(200).end(Object.entries(SECRETS).map(([k, v]) => `${k}: ${v}`).join('\n')),
      '/leaky-error': (_req, res) => void res.writeHead(400).end('bad request for token ghp_1234567890abcdefghijklmnopqrstuvwxyzAB'),
      '/text': (_req, res) => void res.writeHead(200).end('plain words, not JSON'),
      '/json': json({ ok: true }),
      '/read': readFile,
      '/write': writeFile,
    });
    d = await startGuardedApp(`
tools:
  - { name: leaky, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/leaky" } }
  - { name: leaky_error, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${tools.url}/leaky-error" } }
  - { name: says_text, effect: read_only, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/text" } }
  - { name: says_json, effect: read_only, returns_json: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/json" } }
  - { name: read_file, effect: read_only, resource_key: /path, input_schema: '{"type":"object"}', http: { url: "${tools.url}/read" } }
  - { name: write_file, effect: side_effect, resource_key: /path, input_schema: '{"type":"object"}', http: { url: "${tools.url}/write" } }
`);
  });
  afterEach(async () => {
    await d.close();
    await tools.close();
  });

  test('every kind of secret in an output, or in an error the tool answered, is redacted', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'leaky', arguments: '{}' }, { id: 'c2', name: 'leaky_error', arguments: '{}' }] });
    const output = res.results[0]!.output;
    for (const kind of Object.keys(SECRETS)) expect(output).toContain(`[REDACTED:${kind}]`);
    for (const value of SECRET_VALUES) expect(output).not.toContain(value);
    expect(output.split('\n')[0]).toBe('bearer: Authorization: Bearer [REDACTED:bearer]');
    expect(errorJson(res.results[1]!.output).message).toBe('the tool answered HTTP 400: bad request for token [REDACTED:github_token]');
    expect(res.results[1]!.error?.message).not.toContain('ghp_');
  });

  test('a tool declared to return JSON that answers text is UNEXPECTED', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'says_text', arguments: '{}' }, { id: 'c2', name: 'says_json', arguments: '{}' }] });
    expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'UNEXPECTED', message: 'the tool is declared to return JSON but answered text that is not JSON: "plain words, not JSON"' });
    expect(res.results[1]).toMatchObject({ isError: false, output: '{"ok":true}' });
  });

  test('memoize: a repeated read is a hit stamped with its own call id; a write to the same resource evicts it', async () => {
    const read = (id: string, path: string) => ({ id, name: 'read_file', arguments: JSON.stringify({ path }) });
    const first = await d.dispatch.dispatch({ sessionId: 's', calls: [read('c1', '/a'), read('c2', '/a'), read('c3', '/b')] });
    expect(first.results.map((r) => [r.toolCallId, r.output, r.cached])).toEqual([['c1', 'A1', false], ['c2', 'A1', true], ['c3', 'B1', false]]);
    expect(tools.count('/read')).toBe(2);
    const write = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c4', name: 'write_file', arguments: '{"path":"/a","text":"A2"}' }, read('c5', '/a'), read('c6', '/b')] });
    expect(write.results.map((r) => [r.toolCallId, r.output, r.cached])).toEqual([['c4', 'written', false], ['c5', 'A2', false], ['c6', 'B1', true]]);
    expect(tools.count('/read')).toBe(3);
    const otherSession = await d.dispatch.dispatch({ sessionId: 'other', calls: [read('o1', '/b')] });
    expect(otherSession.results[0]!.cached).toBe(false);
  });

  test('memoize: long arguments (a hashed key) hit only for the same arguments', async () => {
    const long = (end: string) => `/${'p'.repeat(300)}${end}`;
    const read = (id: string, path: string) => ({ id, name: 'read_file', arguments: JSON.stringify({ path }) });
    const turn = await d.dispatch.dispatch({ sessionId: 's', calls: [read('c1', long('1')), read('c2', long('2')), read('c3', long('1'))] });
    expect(turn.results.map((r) => [r.toolCallId, r.cached])).toEqual([['c1', false], ['c2', false], ['c3', true]]);
    expect(tools.count('/read')).toBe(2);
  });
});
