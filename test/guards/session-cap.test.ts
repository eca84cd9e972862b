import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';

// Found in review: the memory store (the default) evicted the least recently used sessions past
// limits.max_sessions with their budget counts and loop windows, so other sessions' traffic
// started a session's budget and loop detection again from zero while it was in use; a fix that
// refused new sessions past the cap instead let one tenant's one-read sessions fail every other
// tenant's side-effecting calls for an hour. Now a new session is never refused, and a session
// used within the hour is pushed out only by its own tenant's sessions: another tenant's flood
// evicts its own. Through the gRPC service, with a real HTTP tool and two tenants.

const ACME: TestToken = { token: 'token-acme-0123456789', tenant: 'acme', scopes: ['dispatch'] };
const MALLORY: TestToken = { token: 'token-mallory-012345', tenant: 'mallory', scopes: ['dispatch'] };

const yaml = (url: string) => `${authYaml([ACME, MALLORY])}
limits: { max_sessions: 3 }
tools:
  - name: send_mail
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${url}/send_mail" }
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/lookup" }
policies:
  - match: send_mail
    budget: { max_calls_per_session: 2 }
`;

let tools: ToolServer;
let d: AuthApp;
beforeAll(async () => {
  tools = await startToolServer({ '/send_mail': json({ sent: true }), '/lookup': json({ found: 'same' }) });
  d = await startAuthApp(yaml(tools.url));
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

let n = 0;
const call = (who: TestToken, sessionId: string, name: string, args: object = { n: ++n }) =>
  d.dispatch.dispatch({ sessionId, calls: [{ id: `c${++n}`, name, arguments: JSON.stringify(args) }] }, bearer(who.token)).then((r) => r.results[0]!);
const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));

test("another tenant's sessions past max_sessions neither restart a session's budget nor its loop streak, and are never refused", async () => {
  expect((await call(ACME, 'model', 'send_mail')).isError).toBe(false);
  for (let i = 0; i < 2; i++) expect(loopWarnings((await call(ACME, 'model', 'lookup', { q: 'x' })).warnings)).toEqual([]);

  for (let i = 0; i < 10; i++) expect((await call(MALLORY, `other-${i}`, 'send_mail')).isError).toBe(false);
  expect(tools.count('/send_mail')).toBe(11);

  expect(loopWarnings((await call(ACME, 'model', 'lookup', { q: 'x' })).warnings)).toHaveLength(1);
  expect((await call(ACME, 'model', 'send_mail')).isError).toBe(false);
  const over = await call(ACME, 'model', 'send_mail');
  expect(over.error?.message).toBe('this session has used its budget of 2 calls of "send_mail" (policies budget:); this call was not executed');
  expect(tools.count('/send_mail')).toBe(12);
});
