import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// A security probe: an operator's HTTP tool got a call's session_id without its tenant, so two
// tenants' sessions of the same id were one session at a tool keeping per-session state (a cart,
// its own dedup). Every HTTP call now carries `Dispatch-Tenant` (percent-encoded), set by dispatch
// over any configured header of that name (`default` without auth); MCP calls `_meta` `dispatch/tenant`.

const A: TestToken = { token: 'token-a-0123456789', tenant: 'acme', scopes: ['dispatch', 'admin'] };
const B: TestToken = { token: 'token-b-0123456789', tenant: 'globex', scopes: ['dispatch', 'admin'] };

let tools: ToolServer;
let d: AuthApp;
beforeAll(async () => {
  tools = await startToolServer({ '/cart': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}') });
  d = await startAuthApp(`${authYaml([A, B])}tools:\n  - { name: cart, effect: read_only, skip_memoize: true, http: { url: "${tools.url}/cart" } }\n`);
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const tenantOf = (i: number) => tools.received[i]!.headers['dispatch-tenant'];

test("two tenants' calls in sessions of one id reach a shared tool each with its tenant", async () => {
  for (const who of [A, B]) await d.dispatch.dispatch({ sessionId: 's2', calls: [{ id: 'c', name: 'cart', arguments: '{}' }] }, bearer(who.token));
  const last = tools.received.length;
  expect([tenantOf(last - 2), tenantOf(last - 1)]).toEqual(['acme', 'globex']);
  expect(tools.received.slice(-2).map((r) => r.body.session_id)).toEqual(['s2', 's2']);
});

test("a tenant's tool cannot set another tenant's name in the header", async () => {
  await d.registry.registerTools({ tools: [{ name: 'spoof', effect: Effect.READ_ONLY, executor: { case: 'http', value: { url: `${tools.url}/cart`, headers: { 'Dispatch-Tenant': 'acme' } } } }] }, bearer(B.token));
  await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'spoof', arguments: '{}' }] }, bearer(B.token));
  expect(tenantOf(tools.received.length - 1)).toBe('globex');
});

test('without auth, the one tenant: default, over a configured header of the name', async () => {
  const single = await startApp(`tools:\n  - { name: cart, effect: read_only, http: { url: "${tools.url}/cart", headers: { Dispatch-Tenant: forged } } }\n`);
  try {
    await single.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'cart', arguments: '{}' }] });
    expect(tenantOf(tools.received.length - 1)).toBe('default');
  } finally {
    await single.close();
  }
});
