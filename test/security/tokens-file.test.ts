// Tokens from a mounted secret file (DISPATCH_AUTH_TOKENS_FILE or auth.tokens_file), reloaded when
// the file changes the way a Kubernetes Secret mount changes: a symlink swapped to a new directory.
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config';
import { buildApp } from '../../src/app';
import { createAuthPlugin } from '../../src/app/plugins/auth-plugin';
import { createLogger } from '../../src/log';
import { authYaml, bearer, codeOf, startAuthApp, tokenEntriesYaml, type TestToken } from './support/auth-app';

const OLD: TestToken = { token: 'old-token-11aa', tenant: 'team-a', scopes: ['dispatch'] };
const NEW: TestToken = { token: 'new-token-22bb', tenant: 'team-a', scopes: ['dispatch'] };
const INLINE: TestToken = { token: 'inline-token-33cc', tenant: 'ops', scopes: ['dispatch', 'admin'] };
const RELOAD_MS = 50;

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dispatch-tokens-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Lays a Secret out as the kubelet does: `..data` -> a timestamped dir, the file a symlink through `..data`. */
function writeSecret(tokens: readonly TestToken[] | string, generation: number): string {
  const gen = join(dir, `..gen${generation}`);
  mkdirSync(gen);
  writeFileSync(join(gen, 'tokens.yaml'), typeof tokens === 'string' ? tokens : tokenEntriesYaml(tokens));
  symlinkSync(`..gen${generation}`, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  const file = join(dir, 'tokens.yaml');
  try {
    symlinkSync('..data/tokens.yaml', file);
  } catch {
    // already linked through ..data
  }
  return file;
}

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

const listCode = (app: { registry: { listTools: (r: object, o: object) => Promise<unknown> } }, token: string) => codeOf(app.registry.listTools({}, bearer(token)));

test('DISPATCH_AUTH_TOKENS_FILE tokens work alongside inline ones, and a swapped Secret is picked up', async () => {
  const file = writeSecret([OLD], 1);
  const app = await startAuthApp(authYaml([INLINE]), { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS } });
  try {
    expect(await listCode(app, OLD.token)).toBe('ok');
    expect(await listCode(app, INLINE.token)).toBe('ok');
    expect(await listCode(app, NEW.token)).toBe(grpc.status.UNAUTHENTICATED);
    writeSecret([NEW], 2);
    expect(await until(async () => (await listCode(app, NEW.token)) === 'ok')).toBe(true);
    expect(await listCode(app, OLD.token)).toBe(grpc.status.UNAUTHENTICATED);
    expect(await listCode(app, INLINE.token)).toBe('ok');
  } finally {
    await app.close();
  }
});

test('an invalid or missing file on reload keeps the previous tokens and logs a warning without token material', async () => {
  const file = writeSecret([OLD], 1);
  const lines: string[] = [];
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS }, logger: createLogger('info', (l) => lines.push(l) > 0) });
  try {
    writeSecret('- tenant: team-a\n  scopes: [dispatch]\n  sha256: not-a-digest\n', 2);
    expect(await until(async () => lines.some((l) => l.includes('keeping the previous tokens')))).toBe(true);
    expect(await listCode(app, OLD.token)).toBe('ok');
    rmSync(join(dir, '..data'));
    await new Promise((r) => setTimeout(r, RELOAD_MS * 4));
    expect(await listCode(app, OLD.token)).toBe('ok');
    expect(lines.join('')).not.toContain(OLD.token);
  } finally {
    await app.close();
  }
});

test('auth.tokens_file is read relative to the config file, and DISPATCH_AUTH_TOKENS_FILE overrides it', async () => {
  writeFileSync(join(dir, 'a.yaml'), tokenEntriesYaml([OLD]));
  writeFileSync(join(dir, 'b.yaml'), tokenEntriesYaml([NEW]));
  const yaml = 'auth:\n  tokens_file: a.yaml\n';
  const fromConfig = await startAuthApp(yaml, { configFile: join(dir, 'config.yaml') });
  try {
    expect(await listCode(fromConfig, OLD.token)).toBe('ok');
    expect(await listCode(fromConfig, NEW.token)).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await fromConfig.close();
  }
  const fromEnv = await startAuthApp(yaml, { configFile: join(dir, 'config.yaml'), auth: { env: { DISPATCH_AUTH_TOKENS_FILE: join(dir, 'b.yaml') } } });
  try {
    expect(await listCode(fromEnv, NEW.token)).toBe('ok');
    expect(await listCode(fromEnv, OLD.token)).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await fromEnv.close();
  }
});

test('an empty tokens file still turns authentication on (nobody gets in), and a missing one stops start-up', async () => {
  writeFileSync(join(dir, 'empty.yaml'), '');
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: join(dir, 'empty.yaml') } } });
  try {
    expect(await codeOf(app.registry.listTools({}))).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await app.close();
  }
  const missing = join(dir, 'missing.yaml');
  await expect(buildApp(parseConfig('', 'c.yaml'), {}, [createAuthPlugin({ env: { DISPATCH_AUTH_TOKENS_FILE: missing } })])).rejects.toThrow(`${missing}: cannot read the tokens file (ENOENT)`);
  writeFileSync(join(dir, 'map.yaml'), 'tenant: a\n');
  await expect(buildApp(parseConfig('', 'c.yaml'), {}, [createAuthPlugin({ env: { DISPATCH_AUTH_TOKENS_FILE: join(dir, 'map.yaml') } })])).rejects.toThrow('the tokens file must be a YAML list of {tenant, scopes, sha256}');
});
