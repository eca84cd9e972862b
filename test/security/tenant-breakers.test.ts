import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

const A: TestToken = { token: 'token-a-0123456789', tenant: 'acme', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'token-b-0123456789', tenant: 'globex', scopes: ['dispatch', 'admin'] };

let tools: ToolServer;
let d: AuthApp;
beforeAll(async () => {
  tools = await startToolServer({ '/down': (_req, res) => void res.writeHead(500).end('down') });
  d = await startAuthApp(`${authYaml([A, B])}tools: []\n`);
  for (const who of [A, B]) {
    await d.registry.registerTools({ tools: [{ name: 'flaky', effect: Effect.READ_ONLY, retry: { maxAttempts: 1 }, executor: { case: 'http', value: { url: `${tools.url}/down`, headers: {} } } }] }, bearer(who.token));
  }
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

test("one tenant's failures open its own breaker, never another tenant's tool of the same name", async () => {
  const call = (who: TestToken, id: string) => d.dispatch.dispatch({ sessionId: `s-${id}`, calls: [{ id, name: 'flaky', arguments: '{}' }] }, bearer(who.token)).then((r) => r.results[0]!);
  for (let i = 0; i < 5; i++) expect((await call(A, `a${i}`)).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  const before = tools.count('/down');
  expect((await call(A, 'a5')).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(tools.count('/down')).toBe(before);
  expect((await call(B, 'b0')).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect(tools.count('/down')).toBe(before + 1);
  const stats = async (who: TestToken) => (await d.registry.getToolStats({ tool: 'flaky' }, bearer(who.token))).stats[0]!;
  expect((await stats(A)).breakerState).toBe('open');
  expect((await stats(B)).breakerState).toBe('closed');
});
