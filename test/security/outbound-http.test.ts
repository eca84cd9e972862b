// HTTP executors follow no redirect to another origin and send only the credentials configured
// for the tool: the client's bearer token never reaches a tool.
import { startToolServer, json, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

const CLIENT: TestToken = { token: 'client-bearer-SECRET-42', tenant: 'acme', scopes: ['dispatch'] };

let origin: ToolServer;
let elsewhere: ToolServer;
let app: AuthApp;
beforeAll(async () => {
  elsewhere = await startToolServer({ '/steal': json({ stolen: true }) });
  origin = await startToolServer({
    '/cross': (_req, res) => void res.writeHead(307, { location: `${elsewhere.url}/steal` }).end(),
    '/cross-302': (_req, res) => void res.writeHead(302, { location: `${elsewhere.url}/steal` }).end(),
    '/same': (_req, res) => void res.writeHead(307, { location: '/target' }).end(),
    '/target': json({ reached: true }),
    '/plain': json({ ok: true }),
    '/same-302': (_req, res) => void res.writeHead(302, { location: '/target' }).end(),
    '/loop': (_req, res) => void res.writeHead(307, { location: '/loop' }).end(),
    '/not-modified': (_req, res) => void res.writeHead(304).end(),
    '/busy': (_req, res) => void res.writeHead(429, { 'retry-after': '1' }).end('slow down'),
  });
  const tool = (name: string, path: string, headers = '') => `  - name: ${name}\n    effect: read_only\n    retry: { max_attempts: 1 }\n    http: { url: "${origin.url}${path}"${headers} }\n`;
  app = await startAuthApp(`tools:\n${tool('cross', '/cross')}${tool('cross_302', '/cross-302')}${tool('same', '/same')}${tool('same_302', '/same-302')}${tool('loop', '/loop')}${tool('not_modified', '/not-modified')}${tool('busy', '/busy')}${tool('keyed', '/plain', ', headers: { x-api-key: tool-key-1 }')}${tool('own_auth', '/plain', ', headers: { authorization: "Bearer tool-own-credential" }')}${authYaml([CLIENT])}`);
});
afterAll(async () => {
  await app.close();
  await origin.close();
  await elsewhere.close();
});

const run = async (name: string) => (await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name, arguments: '{}' }] }, bearer(CLIENT.token))).results[0]!;

test('a 307 or 302 to another origin (another port on the same host) is not followed: the other server counts zero requests', async () => {
  for (const name of ['cross', 'cross_302']) {
    const res = await run(name);
    expect(res.isError).toBe(true);
    expect(JSON.parse(res.output)).toMatchObject({ kind: 'TOOL_ERROR' });
    expect(res.output).toContain('redirect');
  }
  expect(elsewhere.count()).toBe(0);
  expect(origin.count('/cross')).toBe(1);
});

test('a same-origin 307 is followed (so the cross-origin refusal above is the origin check at work)', async () => {
  const res = await run('same');
  expect(res.output).toBe('{"reached":true}');
  expect(origin.count('/target')).toBe(1);
});

test('each refused 3xx says why: another origin, a method change, too many hops, a 304', async () => {
  const messages = Object.fromEntries(await Promise.all(['cross', 'same_302', 'loop', 'not_modified'].map(async (name) => [name, JSON.parse((await run(name)).output).message as string])));
  expect(messages).toEqual({
    cross: expect.stringContaining('redirect (HTTP 307) to another origin, which dispatch does not follow'),
    same_302: expect.stringContaining('would not resend the request as it was (only 307 and 308 are followed)'),
    loop: expect.stringMatching(/redirected more than \d+ times \(HTTP 307\)/),
    not_modified: expect.stringContaining('HTTP 304 (Not Modified), which is no answer to a call'),
  });
});

test('HTTP 429 tells the model to wait and call again unchanged, not to correct its request', async () => {
  const res = JSON.parse((await run('busy')).output);
  expect(res).toMatchObject({ kind: 'TOOL_ERROR', retry_after_ms: 1000 });
  expect(res.suggestion).toBe('The tool is busy and asked to be called again in 1 s (retry_after_ms); call it again then or later, unchanged, or use another tool meanwhile.');
});

test("a tool receives only its configured headers, never the client's bearer token", async () => {
  origin.received.length = 0;
  await run('keyed');
  await run('own_auth');
  const [keyed, ownAuth] = origin.received;
  expect(keyed!.headers['x-api-key']).toBe('tool-key-1');
  expect(keyed!.headers.authorization).toBeUndefined();
  expect(ownAuth!.headers.authorization).toBe('Bearer tool-own-credential');
  expect(ownAuth!.headers['x-api-key']).toBeUndefined();
  for (const r of [...origin.received, ...elsewhere.received]) {
    expect(JSON.stringify(r.headers) + JSON.stringify(r.body)).not.toContain(CLIENT.token);
  }
});
