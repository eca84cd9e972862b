// Bearer-token authentication and scopes (DESIGN sections 9 and 11): a wrong or missing token is
// UNAUTHENTICATED, a missing scope PERMISSION_DENIED naming the scope, health needs nothing, and
// loopback without any auth configured stays the embedded default.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAuthenticator, createTokenTable, sha256Hex } from '../../src/auth';
import { main } from '../../src/cli/dispatchd';
import { ConfigError, parseConfig } from '../../src/config';
import { RpcError } from '../../src/server';
import { authYaml, bearer, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';
import { RPCS } from './support/rpc-calls';

// The module object itself (not an interop copy), so a spy sees the calls src/auth makes.
const crypto = require('node:crypto') as typeof import('node:crypto');

const ALL: TestToken = { token: 'tok-all-0f9e8d7c6b5a', tenant: 'acme', scopes: ['dispatch', 'subscribe', 'admin', 'worker'] };
const tokenWith = (scope: string): TestToken => ({ token: `tok-only-${scope}-51a2b3`, tenant: 'acme', scopes: [scope] });
const ONLY = ['dispatch', 'subscribe', 'admin', 'worker'].map(tokenWith);
const TOOLS = `tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n`;

describe('with bearer tokens configured', () => {
  let app: AuthApp;
  beforeAll(async () => {
    app = await startAuthApp(`${TOOLS}${authYaml([ALL, ...ONLY])}`);
  });
  afterAll(() => app.close());

  test('a call without a token is UNAUTHENTICATED and says how to authenticate', async () => {
    const s = await statusOf(app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] }));
    expect(s).toEqual({ code: grpc.status.UNAUTHENTICATED, details: 'authentication required: send the metadata "authorization: Bearer <token>"' });
  });

  test('a wrong token, a token of the right length but wrong bytes, and a malformed header are UNAUTHENTICATED', async () => {
    const wrong = [
      { authorization: 'Bearer not-a-token' },
      { authorization: `Bearer ${ALL.token.slice(0, -1)}x` },
      { authorization: `Bearer ${sha256Hex(ALL.token)}` },
      { authorization: ALL.token },
      { authorization: `Basic ${Buffer.from(`u:${ALL.token}`).toString('base64')}` },
      { authorization: 'Bearer ' },
    ];
    for (const metadata of wrong) {
      const s = await statusOf(app.registry.listTools({}, { metadata }));
      expect([metadata.authorization, s.code]).toEqual([metadata.authorization, grpc.status.UNAUTHENTICATED]);
    }
  });

  test('a header joining a valid token with another (as HTTP/2 joins most repeated headers, or a proxy may) is refused', async () => {
    const s = await statusOf(app.registry.listTools({}, { metadata: { authorization: `Bearer ${ALL.token}, Bearer other` } }));
    expect(s.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  // Over the network a second value never arrives (test/security/repeated-authorization.test.ts).
  test('two authorization values handed to the authenticator are refused even when one is valid', () => {
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${ALL.token}`);
    metadata.add('authorization', 'Bearer other');
    const authenticate = createAuthenticator({ tokens: () => createTokenTable([{ tenant: 'acme', scopes: ['dispatch'], sha256: sha256Hex(ALL.token) }]) });
    const call = { metadata, getPath: () => '/x' } as unknown as Parameters<typeof authenticate>[0];
    expect(() => authenticate(call, 'dispatch')).toThrow(new RpcError(grpc.status.UNAUTHENTICATED, 'more than one authorization header was sent'));
    metadata.remove('authorization');
    metadata.set('authorization', `Bearer ${ALL.token}`);
    expect(authenticate(call, 'dispatch').tenant).toBe('acme');
  });

  test('the right token is accepted, with "bearer" in any case', async () => {
    const res = await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"a":1}' }] }, { metadata: { authorization: `bearer ${ALL.token}` } });
    expect(res.results[0]!.output).toBe('{"a":1}');
  });

  test.each(RPCS.map((r) => [r.method, r.scope, r] as const))('%s needs the %s scope: every other scope is PERMISSION_DENIED, its own is let through', async (_method, scope, rpc) => {
    for (const other of ONLY.filter((t) => t.scopes[0] !== scope)) {
      expect([other.scopes[0], await rpc.call(app, bearer(other.token))]).toEqual([other.scopes[0], grpc.status.PERMISSION_DENIED]);
    }
    const own = ONLY.find((t) => t.scopes[0] === scope)!;
    const code = await rpc.call(app, bearer(own.token));
    expect(code === grpc.status.PERMISSION_DENIED || code === grpc.status.UNAUTHENTICATED || code === grpc.status.UNIMPLEMENTED).toBe(false);
    expect(await rpc.call(app, {})).toBe(grpc.status.UNAUTHENTICATED);
  });

  test('PERMISSION_DENIED names the scope needed and the method', async () => {
    const s = await statusOf(app.registry.registerTools({ tools: [] }, bearer(tokenWith('dispatch').token)));
    expect(s).toEqual({ code: grpc.status.PERMISSION_DENIED, details: '/dispatch.v1.ToolRegistryService/RegisterTools needs the "admin" scope, which this caller (tenant "acme") does not hold' });
  });

  test('health needs no token', async () => {
    const client = app.registry.raw as grpc.Client;
    const { HealthCheckResponse, status } = await healthCheck(client);
    expect([HealthCheckResponse, status]).toEqual(['SERVING', grpc.status.OK]);
  });
});

async function healthCheck(client: grpc.Client): Promise<{ HealthCheckResponse: string; status: grpc.status }> {
  // grpc.health.v1.HealthCheckResponse { status = 1 } where SERVING = 1: bytes 08 01.
  return new Promise((resolve) =>
    client.makeUnaryRequest('/grpc.health.v1.Health/Check', (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), new grpc.Metadata(), (error, value) =>
      resolve({ HealthCheckResponse: value?.equals(Buffer.from([8, 1])) ? 'SERVING' : String(value?.toString('hex')), status: error ? error.code : grpc.status.OK }),
    ),
  );
}

test('without auth configured, loopback callers need no token and all share the default tenant', async () => {
  const app = await startAuthApp(TOOLS);
  try {
    await app.registry.registerTools({ tools: [{ name: 'mine', executor: { case: 'builtin', value: { name: 'echo' } } }] });
    const listed = await app.registry.listTools({}, { metadata: { authorization: 'Bearer anything' } });
    expect(listed.tools.map((t) => t.name)).toEqual(['echo', 'mine']);
  } finally {
    await app.close();
  }
});

describe('the token table', () => {
  const entries = Array.from({ length: 5 }, (_, i) => ({ tenant: `t${i}`, scopes: ['dispatch'], sha256: sha256Hex(`token-${i}`) }));

  test('holds digests only and finds the principal of a token', () => {
    const table = createTokenTable(entries);
    expect(table.find('token-3')).toEqual({ tenant: 't3', scopes: new Set(['dispatch']) });
    expect(table.find('token-9')).toBeUndefined();
    expect(JSON.stringify(entries)).not.toContain('token-3');
  });

  test('one digest listed for two tenants is refused, naming both entries; listed twice for one tenant, its scopes merge', () => {
    expect(() => createTokenTable([...entries, { tenant: 'late', scopes: ['admin'], sha256: sha256Hex('token-2') }])).toThrow(
      `auth tokens: [5].sha256: sha256 ${sha256Hex('token-2').slice(0, 12)}… already belongs to tenant "t2" ([2]); a token names one tenant`,
    );
    const table = createTokenTable([...entries, { tenant: 't2', scopes: ['admin'], sha256: sha256Hex('token-2') }]);
    expect(table.find('token-2')).toEqual({ tenant: 't2', scopes: new Set(['dispatch', 'admin']) });
    expect(table.size).toBe(entries.length);
  });

  test('a large table finds as a small one does', () => {
    const large = createTokenTable(Array.from({ length: 10_000 }, (_, i) => ({ tenant: `t${i}`, scopes: ['dispatch'], sha256: sha256Hex(`token-${i}`) })));
    expect(large.find('token-9999')?.tenant).toBe('t9999');
    expect(large.find('token-0')?.tenant).toBe('t0');
    expect(large.find('token-10000')).toBeUndefined();
  });

  test('sha256Hex matches `printf %s "$TOKEN" | sha256sum` (UTF-8 bytes, lowercase hex)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(crypto.createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
  });
});

describe('the auth config section', () => {
  const err = (yaml: string) => {
    try {
      parseConfig(yaml, 'c.yaml');
      return '';
    } catch (error) {
      return (error as ConfigError).message;
    }
  };
  test('checks each token entry and the mTLS keys with exact messages', () => {
    expect(err('auth:\n  tokens:\n    - { tenant: a, scopes: [dispatch], sha256: ABC }\n')).toBe('c.yaml: auth.tokens[0].sha256: must be the lowercase hex SHA-256 of the token (64 characters)');
    expect(err(`auth:\n  tokens:\n    - { tenant: a, scopes: [root], sha256: ${sha256Hex('x')} }\n`)).toBe('c.yaml: auth.tokens[0].scopes[0]: unknown scope "root" (dispatch, subscribe, admin or worker)');
    expect(err('auth:\n  mtls_tenant_from: dn\n')).toBe('c.yaml: auth.mtls_tenant_from: must be cn, o or ou');
    expect(err('auth:\n  mtls_scopes: [dispatch, everything]\n')).toBe('c.yaml: auth.mtls_scopes[1]: unknown scope "everything" (dispatch, subscribe, admin or worker)');
    expect(err('auth:\n  token: []\n')).toBe('c.yaml: auth.token: unknown key "token" (did you mean tokens?)');
    // A misspelt key would have left a token with no scopes.
    expect(err(`auth:\n  tokens:\n    - { tenant: a, scope: [dispatch], sha256: ${sha256Hex('x')} }\n`)).toBe('c.yaml: auth.tokens[0].scope: unknown key "scope" (did you mean scopes?)');
    expect(parseConfig('auth:\n  mtls_tenant_from: ou\n  mtls_scopes: [dispatch]\n', 'c.yaml').auth).toMatchObject({ mtlsTenantFrom: 'ou', mtlsScopes: ['dispatch'] });
  });
});

test('dispatchd refuses to listen beyond loopback without authentication unless --insecure', async () => {
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'dispatch-cfg-'));
    writeFileSync(join(dir, 'c.yaml'), TOOLS);
    expect(await main(['--listen', '0.0.0.0:0', '--config', join(dir, 'c.yaml')], {})).toBe(2);
    rmSync(dir, { recursive: true, force: true });
  } finally {
    spy.mockRestore();
  }
  expect(written.join('')).toContain('refusing to listen on 0.0.0.0:0 without authentication; configure auth tokens or pass --insecure');
});
