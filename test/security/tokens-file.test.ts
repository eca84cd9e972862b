// Tokens from a mounted secret file (DISPATCH_AUTH_TOKENS_FILE or auth.tokens_file), reloaded when
// the file changes the way a Kubernetes Secret mount changes: a symlink swapped to a new directory.
import * as grpc from '@grpc/grpc-js';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseConfig } from '../../src/config';
import { buildApp } from '../../src/app';
import { createDispatchClient } from '../../src/client';
import { createAuthPlugin } from '../../src/app/plugins/auth-plugin';
import { createLogger } from '../../src/log';
import { eventually, startWorker } from '../workers/worker-harness';
import { authYaml, bearer, codeOf, startAuthApp, tokenEntriesYaml, type TestToken } from './support/auth-app';
import { createSecretMount, type SecretMount } from './support/secret-mount';

const OLD: TestToken = { token: 'old-token-11aa', tenant: 'team-a', scopes: ['dispatch'] };
const NEW: TestToken = { token: 'new-token-22bb', tenant: 'team-a', scopes: ['dispatch'] };
const INLINE: TestToken = { token: 'inline-token-33cc', tenant: 'ops', scopes: ['dispatch', 'admin'] };
const RELOAD_MS = 50;

let mount: SecretMount;
beforeEach(() => {
  mount = createSecretMount('dispatch-tokens-');
});
afterEach(() => mount.remove());

/** Publishes a new generation of the tokens Secret (the test's, unless `into`); returns the tokens file's path. */
function writeSecret(tokens: readonly TestToken[] | string, into: SecretMount = mount): string {
  into.publish({ 'tokens.yaml': typeof tokens === 'string' ? tokens : tokenEntriesYaml(tokens) });
  return into.path('tokens.yaml');
}

/** How a stream whose token the tokens file revoked ended: its status code, and how long after the revocation. */
interface Revocation {
  readonly code: number;
  readonly afterMs: number;
}

/** Opens a Subscribe stream with a token, then revokes the token in the tokens file. */
async function subscribeRevoked(): Promise<Revocation> {
  const own = createSecretMount('dispatch-tokens-');
  const watcher: TestToken = { token: 'watch-token-44dd', tenant: 'team-a', scopes: ['subscribe'] };
  const file = writeSecret([watcher], own);
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS } });
  const client = createDispatchClient(app.address);
  try {
    const stream = client.subscribe({}, bearer(watcher.token));
    const ended = new Promise<number>((resolve) => {
      stream.on('error', () => undefined);
      stream.on('status', (s: grpc.StatusObject) => resolve(s.code));
    });
    await new Promise((r) => setTimeout(r, 200));
    writeSecret([OLD], own);
    const revoked = Date.now();
    return { code: await ended, afterMs: Date.now() - revoked };
  } finally {
    client.close();
    await app.close();
    own.remove();
  }
}

/** Opens a Work stream with a token, then revokes the token in the tokens file. */
async function workRevoked(): Promise<Revocation> {
  const own = createSecretMount('dispatch-tokens-');
  const worker: TestToken = { token: 'worker-token-55ee', tenant: 'team-a', scopes: ['worker'] };
  const file = writeSecret([worker], own);
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS } });
  const stream = startWorker(app.address, { id: 'w', tools: [{ name: 'w_tool', inputSchema: '{"type":"object"}' }], metadata: { authorization: `Bearer ${worker.token}` } });
  try {
    await new Promise((r) => setTimeout(r, 300));
    writeSecret([OLD], own);
    const revoked = Date.now();
    return { code: (await stream.ended).code, afterMs: Date.now() - revoked };
  } finally {
    stream.disconnect();
    await app.close();
    own.remove();
  }
}

// A revoked stream ends only at the 5 s re-check (CREDENTIAL_RECHECK_MS): both revocations are
// started at once, before the tests, each checked by its own test (each with an app and mount of its own).
let revocations: { subscribe: Promise<Revocation>; work: Promise<Revocation> };
beforeAll(() => {
  revocations = { subscribe: subscribeRevoked(), work: workRevoked() };
  // Awaited by their tests; a failure is reported there, not as an unhandled rejection first.
  for (const revocation of Object.values(revocations)) revocation.catch(() => undefined);
});
afterAll(async () => {
  await Promise.allSettled(Object.values(revocations));
});

const listCode = (app: { registry: { listTools: (r: object, o: object) => Promise<unknown> } }, token: string) => codeOf(app.registry.listTools({}, bearer(token)));

test('DISPATCH_AUTH_TOKENS_FILE tokens work alongside inline ones, and a swapped Secret is picked up', async () => {
  const file = writeSecret([OLD]);
  const app = await startAuthApp(authYaml([INLINE]), { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS } });
  try {
    expect(await listCode(app, OLD.token)).toBe('ok');
    expect(await listCode(app, INLINE.token)).toBe('ok');
    expect(await listCode(app, NEW.token)).toBe(grpc.status.UNAUTHENTICATED);
    writeSecret([NEW]);
    await eventually(async () => (await listCode(app, NEW.token)) === 'ok');
    expect(await listCode(app, OLD.token)).toBe(grpc.status.UNAUTHENTICATED);
    expect(await listCode(app, INLINE.token)).toBe('ok');
  } finally {
    await app.close();
  }
});

test('a Subscribe stream opened with a token the tokens file then revokes ends (within the 5 s re-check)', async () => {
  const { code, afterMs } = await revocations.subscribe;
  expect(code).toBe(grpc.status.UNAUTHENTICATED);
  expect(afterMs).toBeLessThan(7_000);
}, 20_000);

test('a Work stream opened with a token the tokens file then revokes ends at its next message past the 5 s re-check', async () => {
  const { code, afterMs } = await revocations.work;
  expect(code).toBe(grpc.status.UNAUTHENTICATED);
  expect(afterMs).toBeLessThan(7_000);
}, 20_000);

test('an invalid or missing file on reload keeps the previous tokens and logs a warning without token material', async () => {
  const file = writeSecret([OLD]);
  const lines: string[] = [];
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file }, reloadIntervalMs: RELOAD_MS }, logger: createLogger('info', (l) => lines.push(l) > 0) });
  try {
    writeSecret('- tenant: team-a\n  scopes: [dispatch]\n  sha256: not-a-digest\n');
    await eventually(() => lines.some((l) => l.includes('keeping the previous tokens')));
    expect(await listCode(app, OLD.token)).toBe('ok');
    rmSync(mount.path('..data'));
    await new Promise((r) => setTimeout(r, RELOAD_MS * 4));
    expect(await listCode(app, OLD.token)).toBe('ok');
    expect(lines.join('')).not.toContain(OLD.token);
  } finally {
    await app.close();
  }
});

test('auth.tokens_file is read relative to the config file, and DISPATCH_AUTH_TOKENS_FILE overrides it', async () => {
  writeFileSync(mount.path('a.yaml'), tokenEntriesYaml([OLD]));
  writeFileSync(mount.path('b.yaml'), tokenEntriesYaml([NEW]));
  const yaml = 'auth:\n  tokens_file: a.yaml\n';
  const fromConfig = await startAuthApp(yaml, { configFile: mount.path('config.yaml') });
  try {
    expect(await listCode(fromConfig, OLD.token)).toBe('ok');
    expect(await listCode(fromConfig, NEW.token)).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await fromConfig.close();
  }
  const fromEnv = await startAuthApp(yaml, { configFile: mount.path('config.yaml'), auth: { env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('b.yaml') } } });
  try {
    expect(await listCode(fromEnv, NEW.token)).toBe('ok');
    expect(await listCode(fromEnv, OLD.token)).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await fromEnv.close();
  }
});

test("a relative DISPATCH_AUTH_TOKENS_FILE is read from the working directory, not the config file's", async () => {
  // Read against the config file's directory, it named a file that was not there: start-up failed.
  writeFileSync(mount.path('b.yaml'), tokenEntriesYaml([NEW]));
  const elsewhere = createSecretMount('dispatch-config-');
  try {
    const app = await startAuthApp('', { configFile: path.join(elsewhere.path('config.yaml'), '..', 'a', 'b', 'c', 'config.yaml'), auth: { env: { DISPATCH_AUTH_TOKENS_FILE: path.relative(process.cwd(), mount.path('b.yaml')) } } });
    try {
      expect(await listCode(app, NEW.token)).toBe('ok');
    } finally {
      await app.close();
    }
  } finally {
    elsewhere.remove();
  }
});

test('an empty tokens file still turns authentication on (nobody gets in), and a missing one stops start-up', async () => {
  writeFileSync(mount.path('empty.yaml'), '');
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('empty.yaml') } } });
  try {
    expect(await codeOf(app.registry.listTools({}))).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await app.close();
  }
  const missing = mount.path('missing.yaml');
  await expect(buildApp(parseConfig('', 'c.yaml'), {}, [createAuthPlugin({ env: { DISPATCH_AUTH_TOKENS_FILE: missing } })])).rejects.toThrow(`${missing}: cannot read the tokens file (ENOENT)`);
  writeFileSync(mount.path('map.yaml'), 'tenant: a\n');
  await expect(buildApp(parseConfig('', 'c.yaml'), {}, [createAuthPlugin({ env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('map.yaml') } })])).rejects.toThrow('the tokens file must be a YAML list of {tenant, scopes, sha256}');
});
