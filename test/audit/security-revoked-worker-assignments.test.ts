// A Work stream whose token the tokens file revokes, or gives to another tenant, must get none of
// the old tenant's calls once the credential re-check interval has passed - not only once the
// worker next speaks. Before, the re-check ran only when a message arrived from the worker: one
// heartbeating every 4 s (within the 5 s the contract allows) went on receiving the old tenant's
// assignments, arguments and all, for seconds after its token was given away.
import { bearer, startAuthApp, tokenEntriesYaml, type AuthApp, type TestToken } from '../security/support/auth-app';
import { createSecretMount, type SecretMount } from '../security/support/secret-mount';
import { eventually, startWorker } from '../workers/worker-harness';

// The streams re-check their credentials every 5 s; a shorter interval keeps this test fast.
jest.mock('../../src/server/principal', () => ({ ...jest.requireActual<object>('../../src/server/principal'), CREDENTIAL_RECHECK_MS: 300 }));
jest.setTimeout(20_000);

const RELOAD_MS = 50;
const workerA: TestToken = { token: 'quiet-worker-77aa', tenant: 'team-a', scopes: ['worker'] };
const callerA: TestToken = { token: 'quiet-caller-66dd', tenant: 'team-a', scopes: ['dispatch'] };

let mount: SecretMount;
let app: AuthApp;
beforeEach(async () => {
  mount = createSecretMount('dispatch-quiet-worker-');
  mount.publish({ 'tokens.yaml': tokenEntriesYaml([workerA, callerA]) });
  app = await startAuthApp('tools: []\n', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('tokens.yaml') }, reloadIntervalMs: RELOAD_MS } });
});
afterEach(async () => {
  await app.close();
  mount.remove();
});

const callA = async (id: string) =>
  (await app.dispatch.dispatch({ sessionId: id, calls: [{ id, name: 'w_quiet', arguments: JSON.stringify({ secret: 'of team-a', id }) }] }, bearer(callerA.token))).results[0]!;

test.each([
  ['given to another tenant', () => tokenEntriesYaml([{ ...workerA, tenant: 'team-b' }, callerA])],
  ['revoked', () => tokenEntriesYaml([callerA])],
])('a quiet worker whose token is %s receives no call past the re-check interval', async (_what, tokens) => {
  const worker = startWorker(app.address, { id: 'quiet', heartbeatMs: 4_000, tools: [{ name: 'w_quiet', inputSchema: '{"type":"object"}' }], metadata: { authorization: `Bearer ${workerA.token}` }, answer: () => ({ output: 'served' }) });
  try {
    await eventually(async () => (await callA('before')).output === 'served', 5_000, 'the worker serving');
    const served = worker.assignments.length;
    mount.publish({ 'tokens.yaml': tokens() });
    // The file reloaded and the re-check interval (300 ms) passed, with no message from the worker.
    await new Promise((r) => setTimeout(r, 1_000));
    const after = await callA('after');
    expect(after.output).not.toBe('served');
    expect(worker.assignments).toHaveLength(served);
  } finally {
    worker.disconnect();
  }
});
