// A tokens file reloaded with one sha256 listed for two tenants is refused like any invalid file:
// dispatchd keeps serving with the previous tokens and logs the entry. Since the settle delay,
// the table was built in a timer outside the watcher's try, so the conflict was an uncaught
// exception: dispatchd exited 1 with a stack trace, every call in flight cut off.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistryClient } from '../../src/client';
import { startDaemon } from '../helpers/daemon';
import { eventually } from '../workers/worker-harness';
import { bearer, codeOf, tokenEntriesYaml, type TestToken } from './support/auth-app';
import { ensureDist } from './support/child-server';
import { createSecretMount } from './support/secret-mount';

jest.setTimeout(60_000);

const AS_A: TestToken = { token: 'reload-conflict-aa11', tenant: 'team-a', scopes: ['dispatch'] };
const AS_B: TestToken = { ...AS_A, tenant: 'team-b' };
const OTHER: TestToken = { token: 'reload-conflict-cc33', tenant: 'team-c', scopes: ['dispatch'] };

beforeAll(() => ensureDist());

test('dispatchd keeps serving the previous tokens when a reloaded tokens file gives one sha256 to two tenants', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatchd-conflict-'));
  const mount = createSecretMount('dispatch-reload-conflict-');
  const config = join(dir, 'dispatch.yaml');
  writeFileSync(config, 'tools:\n  - name: echo\n    builtin: { name: echo }\n');
  mount.publish({ 'tokens.yaml': tokenEntriesYaml([AS_A]) });
  const daemon = await startDaemon(['--config', config, '--grace', '500'], { DISPATCH_AUTH_TOKENS_FILE: mount.path('tokens.yaml') });
  const registry = createRegistryClient(`127.0.0.1:${daemon.port}`);
  let exitCode: number | null | undefined;
  void daemon.exited.then((code) => (exitCode = code));
  try {
    expect(await codeOf(registry.listTools({}, bearer(AS_A.token)))).toBe('ok');
    mount.publish({ 'tokens.yaml': tokenEntriesYaml([AS_A, OTHER, AS_B]) });
    // The watcher re-checks every 2 s, then lets the file settle 100 ms.
    await eventually(() => daemon.stderr().includes('keeping the previous tokens') || exitCode !== undefined, 10_000, 'the reload');
    await new Promise((r) => setTimeout(r, 300));
    expect(exitCode).toBeUndefined();
    expect(daemon.stderr()).not.toContain('Error:');
    expect(daemon.stderr()).toContain('tokens[2].sha256');
    expect(await codeOf(registry.listTools({}, bearer(AS_A.token)))).toBe('ok');
    expect(await codeOf(registry.listTools({}, bearer(OTHER.token)))).not.toBe('ok');
  } finally {
    registry.close();
    if (exitCode === undefined) daemon.child.kill('SIGTERM');
    await daemon.exited;
    mount.remove();
    rmSync(dir, { recursive: true, force: true });
  }
});
