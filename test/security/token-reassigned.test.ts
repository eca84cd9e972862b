// A token the tokens file gives to another tenant ends the Subscribe and Work streams it opened as
// the old tenant (UNAUTHENTICATED), as a revoked token does: before, the periodic re-check
// authenticated again but ignored the tenant it returned, so the new tenant's holder went on
// seeing the old tenant's events and its worker went on serving the old tenant's calls.
import * as grpc from '@grpc/grpc-js';
import { EventKind, type Event } from '../../gen/dispatch/v1/dispatch_pb';
import { startWorker } from '../workers/worker-harness';
import { bearer, startAuthApp, tokenEntriesYaml, type AuthApp, type TestToken } from './support/auth-app';
import { collectEvents } from './support/event-stream';
import { createSecretMount, type SecretMount } from './support/secret-mount';

// The streams re-check their credentials every 5 s; a shorter interval keeps these tests fast.
jest.mock('../../src/server/principal', () => ({ ...jest.requireActual<object>('../../src/server/principal'), CREDENTIAL_RECHECK_MS: 300 }));

const RELOAD_MS = 50;
const REASSIGNED = 'the token now belongs to another tenant; reconnect';
const TOOLS = 'tools:\n  - { name: shout, effect: read_only, builtin: { name: echo } }\n';

let mount: SecretMount;
beforeEach(() => {
  mount = createSecretMount('dispatch-reassigned-');
});
afterEach(() => mount.remove());

async function startWith(tokens: readonly TestToken[]): Promise<AuthApp> {
  mount.publish({ 'tokens.yaml': tokenEntriesYaml(tokens) });
  return startAuthApp(TOOLS, { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: mount.path('tokens.yaml') }, reloadIntervalMs: RELOAD_MS } });
}

/** The stream's final status, or 'still open' once `ms` have passed. */
const within = <T>(ended: Promise<T>, ms: number) => Promise.race([ended, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms))]);

test('a Subscribe stream whose token the tokens file gives to another tenant ends UNAUTHENTICATED; reopened, it sees the new tenant only', async () => {
  const asA: TestToken = { token: 'moved-token-66ff', tenant: 'team-a', scopes: ['dispatch', 'subscribe'] };
  const asB: TestToken = { ...asA, tenant: 'team-b' };
  const otherA: TestToken = { token: 'other-a-token-77aa', tenant: 'team-a', scopes: ['dispatch'] };
  const app = await startWith([asA, otherA]);
  const stream = app.dispatch.subscribe({}, bearer(asA.token)) as grpc.ClientReadableStream<Event>;
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    stream.on('error', () => undefined);
    stream.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
  });
  try {
    await new Promise((r) => setTimeout(r, 150));
    mount.publish({ 'tokens.yaml': tokenEntriesYaml([asB, otherA]) });
    expect(await within(ended, 3_000)).toEqual({ code: grpc.status.UNAUTHENTICATED, details: REASSIGNED });

    const again = collectEvents(app.dispatch, {}, bearer(asB.token));
    await again.ready();
    await app.dispatch.dispatch({ sessionId: 'of-a', calls: [{ id: 'a1', name: 'shout', arguments: '{"text":"private to a"}' }] }, bearer(otherA.token));
    await app.dispatch.dispatch({ sessionId: 'of-b', calls: [{ id: 'b1', name: 'shout', arguments: '{"text":"b"}' }] }, bearer(asB.token));
    expect(await again.waitFor((e) => e.kind === EventKind.TURN_END && e.sessionId === 'of-b')).toBe(true);
    expect(again.events.filter((e) => e.sessionId === 'of-a')).toEqual([]);
    again.cancel();
  } finally {
    stream.cancel();
    await app.close();
  }
}, 20_000);

test("a Work stream whose token the tokens file gives to another tenant ends UNAUTHENTICATED and serves none of the old tenant's calls", async () => {
  const workerA: TestToken = { token: 'moved-worker-88bb', tenant: 'team-a', scopes: ['worker'] };
  const workerB: TestToken = { ...workerA, tenant: 'team-b' };
  const callerA: TestToken = { token: 'caller-a-99cc', tenant: 'team-a', scopes: ['dispatch'] };
  const app = await startWith([workerA, callerA]);
  const worker = startWorker(app.address, { id: 'w', tools: [{ name: 'w_tool', inputSchema: '{"type":"object"}' }], metadata: { authorization: `Bearer ${workerA.token}` }, answer: () => ({ output: 'served' }) });
  const callA = async (id: string) => (await app.dispatch.dispatch({ sessionId: id, calls: [{ id, name: 'w_tool', arguments: JSON.stringify({ secret: 'of team-a', id }) }] }, bearer(callerA.token))).results[0]!;
  try {
    expect((await callA('before')).output).toBe('served');
    mount.publish({ 'tokens.yaml': tokenEntriesYaml([workerB, callerA]) });
    const status = await within(worker.ended, 3_000);
    expect(status === 'still open' ? status : { code: status.code, details: status.details }).toEqual({ code: grpc.status.UNAUTHENTICATED, details: REASSIGNED });
    const after = await callA('after');
    expect(after.output).not.toBe('served');
    expect(worker.assignments).toHaveLength(1);
  } finally {
    worker.disconnect();
    await app.close();
  }
}, 20_000);
