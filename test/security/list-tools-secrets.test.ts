import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

// ListTools shows every tenant the operator's tools (the config file's), whose credentials live
// in their HTTP headers or URL: those are shown redacted, the header names kept.

const ANY: TestToken = { token: 'token-any-tenant-0123', tenant: 'someone', scopes: ['dispatch'] };
let d: AuthApp;
beforeAll(async () => {
  d = await startAuthApp(`${authYaml([ANY])}tools:
  - name: send_email
    effect: side_effect
    http: { url: "http://mailer.internal/send", headers: { authorization: "Bearer sk_live_OPERATOR_SECRET_123456", x-team: mail } }
  - name: fetch_report
    effect: read_only
    http: { url: "https://reports:hunter2@reports.internal/r?x=1" }
`);
});
afterAll(async () => d.close());

test("a tenant's ListTools shows no tool's header values or URL credentials", async () => {
  const { tools } = await d.registry.listTools({}, bearer(ANY.token));
  const http = (name: string) => {
    const spec = tools.find((t) => t.name === name)!;
    if (spec.executor.case !== 'http') throw new Error(`${name} is not an HTTP tool`);
    return spec.executor.value;
  };
  expect(http('send_email').headers).toEqual({ authorization: '[redacted]', 'x-team': '[redacted]' });
  expect(http('send_email').url).toBe('http://mailer.internal/send');
  expect(http('fetch_report').url).toBe('https://redacted@reports.internal/r?x=1');
  expect(JSON.stringify(tools)).not.toMatch(/sk_live|hunter2/);
});
