// TLS and mutual TLS on the gRPC listener (certificates made with openssl at test time), and a
// client certificate's subject naming the tenant (auth.mtls_tenant_from).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { serverCredentials } from '../../src/auth';
import { createDispatchClient, createRegistryClient } from '../../src/client';
import { authYaml, bearer, codeOf, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';
import { createTestPki, type TestPki } from './support/certificates';

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';
const ADMIN_A: TestToken = { token: 'admin-a-7f7f7f', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
const USER_B: TestToken = { token: 'user-b-8e8e8e', tenant: 'team-b', scopes: ['dispatch'] };

let pki: TestPki;
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => pki.remove());

const clientCreds = (cert?: { cert: string; key: string }, ca = pki.ca) =>
  grpc.credentials.createSsl(readFileSync(ca), cert ? readFileSync(cert.key) : null, cert ? readFileSync(cert.cert) : null);

function clientsAt(app: AuthApp, credentials: grpc.ChannelCredentials) {
  const address = `localhost:${app.port}`;
  const registry = createRegistryClient(address, credentials);
  const dispatch = createDispatchClient(address, credentials);
  return { registry, dispatch, close: () => (registry.close(), dispatch.close()) };
}

test('TLS: a client trusting the CA is served; a plaintext client and one trusting another CA are not', async () => {
  const app = await startAuthApp(TOOLS, { daemon: { tls: { cert: pki.serverCert, key: pki.serverKey } }, credentials: clientCreds() });
  const plain = clientsAt(app, grpc.credentials.createInsecure());
  const otherCa = pki.otherCa();
  const wrongTrust = clientsAt(app, clientCreds(undefined, otherCa.cert));
  try {
    const res = await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"x":1}' }] });
    expect(res.results[0]!.output).toBe('{"x":1}');
    expect(await codeOf(plain.registry.listTools({}, { deadlineMs: 2000 }))).toBe(grpc.status.UNAVAILABLE);
    expect(await codeOf(wrongTrust.registry.listTools({}, { deadlineMs: 2000 }))).toBe(grpc.status.UNAVAILABLE);
  } finally {
    plain.close();
    wrongTrust.close();
    await app.close();
  }
});

test('a missing certificate file stops start-up with a message naming the flag and the file', () => {
  expect(() => serverCredentials({ cert: '/nonexistent/tls.crt', key: pki.serverKey })).toThrow('cannot read --tls-cert /nonexistent/tls.crt (ENOENT)');
});

describe('mutual TLS with auth.mtls_tenant_from: cn', () => {
  let app: AuthApp;
  let certA: { cert: string; key: string };
  let certB: { cert: string; key: string };
  beforeAll(async () => {
    certA = pki.client('client-a', '/CN=team-a/O=acme');
    certB = pki.client('client-b', '/CN=team-b/O=acme');
    app = await startAuthApp(`${TOOLS}${authYaml([ADMIN_A, USER_B])}  mtls_tenant_from: cn\n`, {
      daemon: { tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca } },
      credentials: clientCreds(certA),
    });
  });
  afterAll(() => app.close());

  test('a client without a certificate, or with one from another CA, cannot connect', async () => {
    const other = pki.otherCa();
    const rogue = pki.client('rogue', '/CN=team-a', other);
    for (const creds of [clientCreds(), clientCreds(rogue)]) {
      const c = clientsAt(app, creds);
      try {
        expect(await codeOf(c.registry.listTools({}, { deadlineMs: 2000 }))).toBe(grpc.status.UNAVAILABLE);
      } finally {
        c.close();
      }
    }
  });

  test("the certificate's CN is the tenant: B's certificate does not see A's tools; certificate callers get the default scopes", async () => {
    await app.registry.registerTools({ tools: [{ name: 'a_private', executor: { case: 'builtin', value: { name: 'echo' } } }] }, bearer(ADMIN_A.token));
    const asA = (await app.registry.listTools({})).tools.map((t) => t.name);
    expect(asA).toEqual(['a_private', 'echo']);
    const b = clientsAt(app, clientCreds(certB));
    try {
      expect((await b.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo']);
      const res = await b.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'a_private', arguments: '{}' }] });
      expect(JSON.parse(res.results[0]!.output)).toMatchObject({ kind: 'UNKNOWN_TOOL' });
      const denied = await statusOf(b.registry.registerTools({ tools: [] }));
      expect(denied).toEqual({ code: grpc.status.PERMISSION_DENIED, details: '/dispatch.v1.ToolRegistryService/RegisterTools needs the "admin" scope, which this caller (tenant "team-b") does not hold' });
    } finally {
      b.close();
    }
  });

  test("a bearer token for another tenant than the certificate's is UNAUTHENTICATED; a wrong token is too", async () => {
    expect(await statusOf(app.registry.listTools({}, bearer(USER_B.token)))).toEqual({ code: grpc.status.UNAUTHENTICATED, details: "the bearer token's tenant does not match the client certificate's" });
    expect(await codeOf(app.registry.listTools({}, bearer('forged')))).toBe(grpc.status.UNAUTHENTICATED);
  });
});

test('mtls_tenant_from: ou with mtls_scopes; a certificate without that field needs a token', async () => {
  const certOps = pki.client('client-ops', '/CN=alice/O=acme/OU=ops');
  const certNoOu = pki.client('client-no-ou', '/CN=bob/O=acme');
  const app = await startAuthApp(`${TOOLS}${authYaml([USER_B])}  mtls_tenant_from: ou\n  mtls_scopes: [dispatch, admin]\n`, {
    daemon: { tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca } },
    credentials: clientCreds(certOps),
  });
  const noOu = clientsAt(app, clientCreds(certNoOu));
  try {
    await app.registry.registerTools({ tools: [{ name: 'ops_tool', executor: { case: 'builtin', value: { name: 'echo' } } }] });
    expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo', 'ops_tool']);
    expect(await codeOf(noOu.registry.listTools({}))).toBe(grpc.status.UNAUTHENTICATED);
    expect((await noOu.registry.listTools({}, bearer(USER_B.token))).tools.map((t) => t.name)).toEqual(['echo']);
  } finally {
    noOu.close();
    await app.close();
  }
});
