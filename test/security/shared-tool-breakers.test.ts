import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// A security probe: an operator's read-only tool answering 500 to input it cannot handle (and 200
// otherwise) had one breaker for every tenant: tenant B's three bad calls opened it, tenant A's
// valid call got BREAKER_OPEN, and one bad call of B's every 30 s took the half-open probe and kept
// it open. A shared tool now has a breaker per calling tenant.

const A: TestToken = { token: 'token-a-0123456789', tenant: 'acme', scopes: ['dispatch'] };
const B: TestToken = { token: 'token-b-0123456789', tenant: 'globex', scopes: ['dispatch'] };

let tools: ToolServer;
let d: AuthApp;
beforeAll(async () => {
  tools = await startToolServer({
    '/read': (req, res) => {
      const bad = (req.body.arguments as { bad?: boolean }).bad === true;
      res.writeHead(bad ? 500 : 200, { 'content-type': 'application/json' }).end(bad ? '{"error":"cannot"}' : '{"rows":1}');
    },
  });
  d = await startAuthApp(`${authYaml([A, B])}tools:\n  - { name: read, effect: read_only, skip_memoize: true, retry: { max_attempts: 1 }, http: { url: "${tools.url}/read" } }\npolicies:\n  - { match: read, breaker: { consecutive_failures: 3, half_open_after_ms: 300 } }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const call = (who: TestToken, id: string, args: object) => d.dispatch.dispatch({ sessionId: `s-${id}`, calls: [{ id, name: 'read', arguments: JSON.stringify(args) }] }, bearer(who.token)).then((r) => r.results[0]!);
const breakerOf = async (who: TestToken) => (await d.registry.getToolStats({ tool: 'read' }, bearer(who.token))).stats[0]!.breakerState;

test("one tenant's failures open its own breaker of a shared tool; another tenant's calls go on reaching it", async () => {
  for (let i = 0; i < 3; i++) expect((await call(B, `b${i}`, { bad: true, i })).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await call(B, 'b3', { q: 'fine' })).error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(await call(A, 'a0', { q: 'fine' })).toMatchObject({ isError: false, output: '{"rows":1}' });
  expect(await breakerOf(B)).toBe('open');
  expect(await breakerOf(A)).toBe('closed');
  // B's probe, once its breaker half-opens, fails and opens B's again; A's calls never see it.
  await new Promise((r) => setTimeout(r, 350));
  expect((await call(B, 'b4', { bad: true })).error?.kind).toBe(ErrorKind.TOOL_ERROR);
  expect((await call(A, 'a1', { q: 'fine' })).isError).toBe(false);
  expect(await breakerOf(B)).toBe('open');
});
