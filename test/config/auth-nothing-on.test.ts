import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { startApp } from '../helpers/servers';

// A config author's probe: `auth: { tokens: [] }` (and `auth: {}`) read as authentication on and
// let every caller in as tenant `default`, unsaid (an empty tokens *file* lets nobody in); a token
// entry with no `scopes:` loaded and could call nothing. Both are refused at start now, naming
// the path; and the serving line says whether authentication is on.

const TOOLS = 'tools:\n  - { name: echo, effect: read_only, builtin: { name: echo } }\n';
const SHA = 'a'.repeat(64);

test.each([['auth:\n  tokens: []\n'], ['auth: {}\n']])('%j turns on no authentication: refused, saying how to run without', async (auth) => {
  await expect(startApp(`${TOOLS}${auth}`, { env: {} })).rejects.toThrow(
    'test.yaml: auth: turns on no authentication: tokens is empty and there is no tokens_file (nor DISPATCH_AUTH_TOKENS_FILE) or mtls_tenant_from, so every caller would be tenant "default", unauthenticated; give it tokens or a tokens_file (an empty tokens file lets nobody in), or remove auth: to run without authentication',
  );
});

test('an empty auth.tokens with DISPATCH_AUTH_TOKENS_FILE set is authentication from the file', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'auth-')), 'tokens.yaml');
  writeFileSync(file, `- { tenant: a, sha256: "${SHA}", scopes: [dispatch] }\n`);
  const app = await startApp(`${TOOLS}auth:\n  tokens: []\n`, { env: { DISPATCH_AUTH_TOKENS_FILE: file }, logger: SILENT_LOGGER });
  await expect(app.dispatch.dispatch({ sessionId: 's', calls: [] })).rejects.toMatchObject({ code: 16 });
  await app.close();
});

test('a token without scopes is refused naming its path and the scopes', () => {
  expect(() => parseConfig(`${TOOLS}auth:\n  tokens:\n    - { tenant: a, sha256: "${SHA}" }\n`, 'dispatch.yaml')).toThrow(
    'dispatch.yaml: auth.tokens[0].scopes: must list the token\'s scopes (one or more of dispatch, subscribe, admin, worker): without any it can call nothing',
  );
  expect(() => parseConfig(`${TOOLS}auth:\n  tokens:\n    - { tenant: a, sha256: "${SHA}", scopes: [] }\n`, 'dispatch.yaml')).toThrow('auth.tokens[0].scopes: must list');
});

test('dispatchd exits 1 naming the problem, and its serving line says whether authentication is on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'auth-'));
  writeFileSync(join(dir, 'empty.yaml'), `${TOOLS}auth:\n  tokens: []\n`);
  const refused = await runDaemon(['--listen', '127.0.0.1:0', '--config', join(dir, 'empty.yaml')]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('dispatchd: bad config: ');
  expect(refused.stderr).toContain('auth: turns on no authentication');
  writeFileSync(join(dir, 'open.yaml'), TOOLS);
  writeFileSync(join(dir, 'tokens.yaml'), `${TOOLS}auth:\n  tokens:\n    - { tenant: a, sha256: "${SHA}", scopes: [dispatch] }\n`);
  for (const [file, authentication] of [['open.yaml', 'off'], ['tokens.yaml', 'on']]) {
    const daemon = await startDaemon(['--listen', '127.0.0.1:0', '--config', join(dir, file!)]);
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    expect(daemon.stderr()).toMatch(new RegExp(`"message":"dispatchd serving".*"authentication":"${authentication}"`));
  }
});
