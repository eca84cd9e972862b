// A tenant name keeps the rule of client ids (src/parse/client-id.ts: at most 256 characters, no
// control or invisible or bidirectional format character; joiners inside): it is shown in logs,
// events and dispatchctl lines and is part of Redis keys. A token's tenant that breaks it is
// refused when the config or tokens file is read, naming the entry (before, only C0 and DEL were);
// a client certificate naming such a tenant is refused at the call with UNAUTHENTICATED, the name
// shown escaped (before, any subject a CA signed became the tenant as it was). Certificates are
// made with openssl at test time; CN, O and OU are at most 64 characters in X.509 (openssl refuses
// longer ones), so the length is tested on tokens only.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTokensFile } from '../../src/auth';
import { createRegistryClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { authYaml, startAuthApp, statusOf, type AuthApp, type TestToken } from './support/auth-app';
import { createTestPki, type TestPki } from './support/certificates';

jest.setTimeout(30_000);

const TOOLS = 'tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n';
const SHA = 'a'.repeat(64);
const RULE = 'a tenant name may not hold control characters or invisible or bidirectional format characters';
const tokensYaml = (tenants: readonly string[], indent = '') => tenants.map((t) => `${indent}- { tenant: ${JSON.stringify(t)}, scopes: [dispatch], sha256: ${SHA} }\n`).join('');
const configYaml = (tenants: readonly string[]) => `auth:\n  tokens:\n${tokensYaml(tenants, '    ')}${TOOLS}`;

describe("a token's tenant", () => {
  test.each([
    ['a right-to-left override', 'acme\u202eprod', `holds U+202E at position 5: ${RULE}`],
    ['a zero-width space', 'acme\u200b', `holds U+200B at position 5: ${RULE}`],
    ['a byte order mark', '\ufeffacme', `holds U+FEFF at position 1: ${RULE}`],
    ['a C1 control', 'acme\u0085', `holds U+0085 at position 5: ${RULE}`],
    ['too many characters', 't'.repeat(257), 'is 257 characters long, over the limit of 256'],
  ])('holding %s is refused at load, naming the entry', (_what, bad, problem) => {
    expect(() => parseConfig(configYaml(['team-a', bad]), 'dispatch.yaml')).toThrow(`dispatch.yaml: auth.tokens[1].tenant: ${problem}`);
    const dir = mkdtempSync(join(tmpdir(), 'dispatch-tenants-'));
    try {
      writeFileSync(join(dir, 'tokens.yaml'), tokensYaml([bad]));
      expect(() => readTokensFile(join(dir, 'tokens.yaml'))).toThrow(`${join(dir, 'tokens.yaml')}: tokens[0].tenant: ${problem}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('of 256 characters, or with joiners inside (Persian, an emoji family), is taken', () => {
    const tenants = ['t'.repeat(256), 'می\u200cخواهم', '👨\u200d👩\u200d👧', 'Zusammen\u00adarbeit'];
    expect(parseConfig(configYaml(tenants), 'dispatch.yaml').auth.tokens.map((t) => t.tenant)).toEqual(tenants);
  });
});

describe('a client certificate naming the tenant (mtls_tenant_from: cn)', () => {
  const ADMIN: TestToken = { token: 'admin-7f7f7f', tenant: 'team-a', scopes: ['dispatch', 'admin'] };
  let pki: TestPki;
  let app: AuthApp;
  beforeAll(async () => {
    pki = createTestPki();
    app = await startAuthApp(`${TOOLS}${authYaml([ADMIN])}  mtls_tenant_from: cn\n`, {
      daemon: { tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca } },
      credentials: credentialsOf(pki.client('plain', '/CN=team-a/O=acme')),
    });
  });
  afterAll(async () => {
    await app?.close();
    pki?.remove();
  });

  function credentialsOf(cert: { cert: string; key: string }) {
    return grpc.credentials.createSsl(readFileSync(pki.ca), readFileSync(cert.key), readFileSync(cert.cert));
  }

  /** ListTools and Dispatch as the holder of a certificate with `subject`: their status and details. */
  async function callsWith(name: string, subject: string) {
    const client = createRegistryClient(`localhost:${app.port}`, credentialsOf(pki.client(name, subject)));
    try {
      return await statusOf(client.listTools({}, { deadlineMs: 5000 }));
    } finally {
      client.close();
    }
  }

  test.each([
    ['a right-to-left override', 'rlo', '/CN=team\u202ea/O=acme', 'team\\u202ea', `holds U+202E at position 5: ${RULE}`],
    ['a zero-width space', 'zwsp', '/CN=team-a\u200b/O=acme', 'team-a\\u200b', `holds U+200B at position 7: ${RULE}`],
    ['ESC', 'esc', '/CN=team\u001b[2Ja/O=acme', 'team\\u001b[2Ja', `holds U+001B at position 5: ${RULE}`],
  ])('holding %s is UNAUTHENTICATED, the name shown escaped', async (_what, name, subject, shown, problem) => {
    expect(await callsWith(name, subject)).toEqual({
      code: grpc.status.UNAUTHENTICATED,
      details: `the client certificate's CN "${shown}" ${problem}; present a certificate whose CN is a plain tenant name`,
    });
  });

  test('a plain name, or one with joiners inside, is the tenant', async () => {
    expect(await callsWith('family', '/CN=👨\u200d👩\u200d👧/O=acme')).toEqual({ code: 'ok', details: '' });
    expect((await app.registry.listTools({})).tools.map((t) => t.name)).toEqual(['echo']);
  });
});
