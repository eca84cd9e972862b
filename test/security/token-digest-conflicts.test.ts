// One token (one sha256) listed for two tenants is refused: in the config file or a tokens file at
// start-up, dispatchd stops naming the entry; in a tokens file reloaded later, the previous tokens
// stay in force and a warning names the entry. Before, the first entry won silently, so which
// tenant the token acted as depended on the order of the entries. Listed twice for one tenant,
// the entries merge: the token holds every scope they list.
import { sha256Hex } from '../../src/auth';
import { createLogger } from '../../src/log';
import { eventually } from '../workers/worker-harness';
import { authYaml, bearer, codeOf, startAuthApp, statusOf, tokenEntriesYaml, type TestToken } from './support/auth-app';
import { createSecretMount, type SecretMount } from './support/secret-mount';

const AS_A: TestToken = { token: 'listed-twice-aa11', tenant: 'team-a', scopes: ['dispatch'] };
const AS_B: TestToken = { ...AS_A, tenant: 'team-b' };
const OTHER: TestToken = { token: 'other-token-bb22', tenant: 'team-c', scopes: ['dispatch'] };
const PREFIX = `sha256 ${sha256Hex(AS_A.token).slice(0, 12)}…`;

let mount: SecretMount;
beforeEach(() => {
  mount = createSecretMount('dispatch-conflicts-');
});
afterEach(() => mount.remove());

const tokensFile = (tokens: readonly TestToken[]) => {
  mount.publish({ 'tokens.yaml': tokenEntriesYaml(tokens) });
  return mount.path('tokens.yaml');
};

test('the config file listing one sha256 for two tenants stops start-up, naming the entry and the first tenant', async () => {
  await expect(startAuthApp(authYaml([AS_A, OTHER, AS_B]), { configFile: 'dispatch.yaml' })).rejects.toThrow(
    `dispatch.yaml: auth.tokens[2].sha256: ${PREFIX} already belongs to tenant "team-a" (auth.tokens[0]); a token names one tenant`,
  );
});

test('a tokens file listing one sha256 for two tenants, or one the config file gives another tenant, stops start-up', async () => {
  const file = tokensFile([AS_A, OTHER, AS_B]);
  await expect(startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file } } })).rejects.toThrow(
    `${file}: tokens[2].sha256: ${PREFIX} already belongs to tenant "team-a" (tokens[0]); a token names one tenant`,
  );
  tokensFile([OTHER, AS_B]);
  await expect(startAuthApp(authYaml([AS_A]), { configFile: 'dispatch.yaml', auth: { env: { DISPATCH_AUTH_TOKENS_FILE: file } } })).rejects.toThrow(
    `${file}: tokens[1].sha256: ${PREFIX} already belongs to tenant "team-a" (auth.tokens[0] of dispatch.yaml); a token names one tenant`,
  );
});

test('a tokens file reloaded with one sha256 for two tenants keeps the previous tokens and logs the entry', async () => {
  const lines: string[] = [];
  const app = await startAuthApp('', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: tokensFile([AS_A]) }, reloadIntervalMs: 50 }, logger: createLogger('info', (l) => lines.push(l) > 0) });
  try {
    tokensFile([AS_A, OTHER, AS_B]);
    await eventually(() => lines.some((l) => l.includes('keeping the previous tokens')));
    expect(lines.find((l) => l.includes('keeping the previous tokens'))).toContain(`tokens[2].sha256: ${PREFIX} already belongs to tenant \\"team-a\\" (tokens[0])`);
    // Still the previous table: the token is team-a's, and the new entry (team-c) is not in force.
    expect((await statusOf(app.registry.removeTool({ name: 'x' }, bearer(AS_A.token)))).details).toContain('tenant "team-a"');
    expect(await codeOf(app.registry.listTools({}, bearer(OTHER.token)))).not.toBe('ok');
  } finally {
    await app.close();
  }
});

test('one sha256 listed twice for one tenant merges: the token holds the scopes of both entries', async () => {
  const app = await startAuthApp(authYaml([AS_A]), { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: tokensFile([{ ...AS_A, scopes: ['subscribe'] }]) } } });
  try {
    expect(await codeOf(app.registry.listTools({}, bearer(AS_A.token)))).toBe('ok');
    const stream = app.dispatch.subscribe({}, bearer(AS_A.token));
    const first = await Promise.race([new Promise((resolve) => stream.on('error', resolve)), new Promise((r) => setTimeout(() => r('open'), 300))]);
    stream.cancel();
    expect(first).toBe('open');
  } finally {
    await app.close();
  }
});
