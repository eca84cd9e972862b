import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// ListTools shows every tenant the operator's tools (the config file's), whose credentials live
// in their HTTP headers or URL (user info, an API key in the query, a webhook's secret path):
// those are shown redacted, the header names, the origin and the first path segment kept. A
// tenant sees its own tools' URLs whole, but for their credentials.

const ANY: TestToken = { token: 'token-any-tenant-0123', tenant: 'someone', scopes: ['dispatch', 'admin'] };
let d: AuthApp;
beforeAll(async () => {
  d = await startAuthApp(`${authYaml([ANY])}tools:
  - name: send_email
    effect: side_effect
    http: { url: "http://mailer.internal/send", headers: { authorization: "Bearer sk_live_OPERATOR_SECRET_123456", x-team: mail } }
  - name: fetch_report
    effect: read_only
    http: { url: "https://reports:hunter2@reports.internal/r?x=1" }
  - name: geocode
    effect: read_only
    http: { url: "https://maps.example.com/geocode?key=AIzaSyD-OPERATOR-SECRET-KEY-0123456789&format=json" }
  - name: notify
    effect: side_effect
    http: { url: "https://hooks.slack.example/services/T0001/B0001/OPERATORwebhookSECRET123#x" }
  - name: telegram
    effect: side_effect
    http: { url: "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage" }
`);
});
afterAll(async () => d.close());

const httpOf = (tools: { name: string; executor: { case?: string; value?: unknown } }[], name: string) => {
  const spec = tools.find((t) => t.name === name)!;
  if (spec.executor.case !== 'http') throw new Error(`${name} is not an HTTP tool`);
  return spec.executor.value as { url: string; headers: Record<string, string> };
};

test("a tenant's ListTools shows no header values, URL credentials, query or deeper path of the operator's tools", async () => {
  const { tools } = await d.registry.listTools({}, bearer(ANY.token));
  expect(httpOf(tools, 'send_email').headers).toEqual({ authorization: '[redacted]', 'x-team': '[redacted]' });
  expect(httpOf(tools, 'send_email').url).toBe('http://mailer.internal/send');
  expect(httpOf(tools, 'fetch_report').url).toBe('https://redacted@reports.internal/r?[redacted]');
  expect(httpOf(tools, 'geocode').url).toBe('https://maps.example.com/geocode?[redacted]');
  expect(httpOf(tools, 'notify').url).toBe('https://hooks.slack.example/services/[redacted]');
  // A token in the first segment is redacted as in results (a security review's finding: it was shown).
  expect(httpOf(tools, 'telegram').url).toBe('https://api.telegram.org/bot123456789:[REDACTED:high_entropy]/[redacted]');
  expect(JSON.stringify(tools)).not.toMatch(/sk_live|hunter2|OPERATOR|AAHdqTcv/);
});

test("a tenant's own tool is listed with its whole URL, its credentials redacted", async () => {
  await d.registry.registerTools(
    { tools: [{ name: 'mine', effect: 1, inputSchema: '{"type":"object"}', executor: { case: 'http', value: { url: 'http://me:pw@127.0.0.1:8/a/b?token=t1', headers: { 'x-key': 'k1' } } } }] },
    bearer(ANY.token),
  );
  const { tools } = await d.registry.listTools({}, bearer(ANY.token));
  expect(httpOf(tools, 'mine')).toMatchObject({ url: 'http://redacted@127.0.0.1:8/a/b?token=t1', headers: { 'x-key': '[redacted]' } });
});
