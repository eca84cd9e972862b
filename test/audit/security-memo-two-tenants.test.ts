// The memo cache is per tenant (issue 10, "tenant isolation everywhere"): the two-tenant test's
// read-only tool answers the same text to everyone, so a memoized answer crossing tenants would
// pass it. Here each execution answers differently: tenant B's identical read (same session id,
// same arguments) runs on its own instead of being served A's cached answer, and B ending its
// session of that id leaves A's cached answer in place.
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';

const A: TestToken = { token: 'memo-tenant-a-token', tenant: 'tenant-a', scopes: ['dispatch'] };
const B: TestToken = { token: 'memo-tenant-b-token', tenant: 'tenant-b', scopes: ['dispatch'] };
const SESSION = 'shared-memo-session';

let tools: ToolServer;
let app: AuthApp;

beforeAll(async () => {
  let n = 0;
  tools = await startToolServer({ '/balance': (_req, res) => void res.writeHead(200).end(`answer #${++n}`) });
  app = await startAuthApp(`tools:
  - name: balance
    effect: read_only
    http: { url: "${tools.url}/balance" }
${authYaml([A, B])}`);
});
afterAll(async () => {
  await app.close();
  await tools.close();
});

const read = async (t: TestToken, id: string) =>
  (await app.dispatch.dispatch({ sessionId: SESSION, calls: [{ id, name: 'balance', arguments: '{"account":"acct-1"}' }] }, bearer(t.token))).results[0]!;

test("one tenant's memoized read is never served to another, and another's EndSession keeps it", async () => {
  const a1 = await read(A, 'a1');
  const a2 = await read(A, 'a2');
  expect([a1.output, a1.cached, a2.output, a2.cached]).toEqual(['answer #1', false, 'answer #1', true]);

  const b1 = await read(B, 'b1');
  expect([b1.output, b1.cached]).toEqual(['answer #2', false]);
  const b2 = await read(B, 'b2');
  expect([b2.output, b2.cached]).toEqual(['answer #2', true]);
  expect(tools.count('/balance')).toBe(2);

  await app.dispatch.endSession({ sessionId: SESSION }, bearer(B.token));
  const a3 = await read(A, 'a3');
  expect([a3.output, a3.cached]).toEqual(['answer #1', true]);
  const b3 = await read(B, 'b3');
  expect([b3.output, b3.cached]).toEqual(['answer #3', false]);
  expect(tools.count('/balance')).toBe(3);
});
