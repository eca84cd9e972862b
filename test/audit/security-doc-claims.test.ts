// Claims of docs/security.md that no other test held the service to (audit): the `registry:`
// example lets the tools it names through while loopback and unlisted private addresses stay
// refused; a tool receives no metadata of the client, only the headers the doc lists; under mutual
// TLS a certificate naming the tenant twice names none, and the answer without credentials says a
// certificate would do; a Subscribe stream whose token loses its scope ends PERMISSION_DENIED; the
// schema nesting bound counts JSON levels.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRegistryClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { createDestinationPolicy } from '../../src/registry';
import { json, startApp, startToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, statusOf, tokenEntriesYaml, type TestToken } from '../security/support/auth-app';
import { createTestPki, type TestPki } from '../security/support/certificates';
import { createSecretMount } from '../security/support/secret-mount';

jest.setTimeout(30_000);

const DOC = readFileSync(join(__dirname, '../../docs/security.md'), 'utf8');
const ECHO = 'tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }\n';

test("the doc's registry example: a listed name resolving to a cluster address connects; loopback and unlisted addresses are refused", () => {
  const block = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.startsWith('registry:\n  http_allow:'));
  const policy = createDestinationPolicy(parseConfig(block!, 'example.yaml').registry);
  // A Service's ClusterIP, a pod's address: private ranges.
  expect(policy.checkAddress('10.96.0.5', 'search.tools.svc.cluster.local')).toBeUndefined();
  expect(policy.checkAddress('203.0.113.9', 'anything.example.com')).toBeUndefined();
  expect(policy.checkAddress('127.0.0.1', 'search.tools.svc.cluster.local')).toBe('registry.http_deny "loopback"');
  expect(policy.checkHost('10.0.0.5')).toBe('registry.http_allow (it is not listed there)');
  expect(policy.checkHost('169.254.169.254')).toBe('the built-in rule 169.254.0.0/16 (link-local, cloud metadata)');
});

test("a tool receives its configured headers, dispatch's three and the HTTP client's own; no metadata of the client", async () => {
  const tools = await startToolServer({ '/t': json({ ok: true }) });
  const d = await startApp(`tools:\n  - { name: t, effect: read_only, http: { url: "${tools.url}/t", headers: { X-Key: k1 } } }\n`);
  try {
    const metadata = { authorization: 'Bearer client-token-9f', 'x-client-extra': 'client-value-7e' };
    await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 't', arguments: '{}' }] }, { metadata });
    const headers = tools.received[0]!.headers;
    expect(Object.keys(headers).sort()).toEqual(
      ['x-key', 'content-type', 'idempotency-key', 'dispatch-tenant', 'traceparent', 'host', 'content-length', 'connection', 'accept', 'accept-language', 'accept-encoding', 'user-agent', 'sec-fetch-mode'].sort(),
    );
    expect(JSON.stringify(headers)).not.toMatch(/client-token-9f|client-value-7e/);
  } finally {
    await d.close();
    await tools.close();
  }
});

describe('mutual TLS naming the tenant by CN', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = createTestPki();
  });
  afterAll(() => pki.remove());
  const creds = (cert: { cert: string; key: string }) => grpc.credentials.createSsl(readFileSync(pki.ca), readFileSync(cert.key), readFileSync(cert.cert));

  test('a certificate with two CNs names no tenant: without a token it is refused, saying a certificate naming the tenant would do', async () => {
    const one = pki.client('one-cn', '/CN=team-a/O=acme');
    const two = pki.client('two-cn', '/CN=team-a/CN=team-b/O=acme');
    const A: TestToken = { token: 'tok-team-a-31c', tenant: 'team-a', scopes: ['dispatch'] };
    const app = await startAuthApp(`${ECHO}${authYaml([A])}  mtls_tenant_from: cn\n`, { daemon: { tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca } }, credentials: creds(one) });
    const twice = createRegistryClient(`localhost:${app.port}`, creds(two));
    try {
      expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo']);
      expect(await statusOf(twice.listTools({}))).toEqual({
        code: grpc.status.UNAUTHENTICATED,
        details: 'authentication required: send the metadata "authorization: Bearer <token>" or a client certificate naming the tenant',
      });
      expect((await twice.listTools({}, bearer(A.token))).tools.map((t) => t.name)).toEqual(['echo']);
    } finally {
      twice.close();
      await app.close();
    }
  });
});

test('a Subscribe stream whose token the tokens file leaves without the subscribe scope ends PERMISSION_DENIED', async () => {
  const mount = createSecretMount('dispatch-tokens-');
  const token: TestToken = { token: 'tok-watch-5a1', tenant: 'team-a', scopes: ['subscribe', 'dispatch'] };
  mount.publish({ 'tokens.yaml': tokenEntriesYaml([token]) });
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('tokens.yaml') }, reloadIntervalMs: 50 } });
  try {
    const stream = app.dispatch.subscribe({}, bearer(token.token));
    const ended = new Promise<grpc.StatusObject>((resolve) => {
      stream.on('error', () => undefined);
      stream.on('status', resolve);
    });
    await new Promise((r) => setTimeout(r, 200));
    mount.publish({ 'tokens.yaml': tokenEntriesYaml([{ ...token, scopes: ['dispatch'] }]) });
    const status = await ended;
    expect([status.code, status.details]).toEqual([grpc.status.PERMISSION_DENIED, '/dispatch.v1.DispatchService/Subscribe needs the "subscribe" scope, which this caller (tenant "team-a") does not hold']);
  } finally {
    await app.close();
    mount.remove();
  }
});

test('schema nesting counts JSON levels of the schema: 15 levels of nested properties register, 16 do not', async () => {
  const d = await startApp(ECHO);
  const nested = (n: number): unknown => (n === 0 ? { type: 'string' } : { type: 'object', properties: { a: nested(n - 1) } });
  const register = (n: number) =>
    statusOf(d.registry.registerTools({ tools: [{ name: `n${n}`, inputSchema: JSON.stringify(nested(n)), executor: { case: 'builtin', value: { name: 'echo' } } }] }));
  try {
    expect(await register(15)).toEqual({ code: 'ok', details: '' });
    expect(await register(16)).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: 'tools[0] ("n16"): input_schema nests deeper than 32 levels' });
  } finally {
    await d.close();
  }
});
