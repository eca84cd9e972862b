import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp, type TestToken } from '../security/support/auth-app';
import { failure } from './error-info';

// An error that waiting mends carries a google.rpc.RetryInfo (retry_delay) beside its ErrorInfo in
// grpc-status-details-bin, so that a client in any language knows when to call again without
// reading the message (docs/failures.md): OVERLOADED, SHUTTING_DOWN, STORE_UNAVAILABLE
// (test/contract/error-details-store.test.ts) and REGISTRY_BUSY. A lasting refusal
// (REGISTRY_LIMIT) or a request to change (INVALID_ARGUMENT) carries none. Read as any client
// reads it: the trailer of a real gRPC call, decoded as google.rpc.Status.

jest.setTimeout(20_000);

const A: TestToken = { token: 'tok-a', tenant: 'acme', scopes: ['dispatch', 'admin'] };

/** A schema text of exactly 2,000 bytes, different for each `variant`. */
const schemaOf = (variant: string) => `{"type":"object","description":"${variant}${'d'.repeat(2000 - 34 - variant.length)}"}`;
const spec = (name: string, variant: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: schemaOf(variant), executor: { case: 'builtin' as const, value: { name: 'echo' } } });

describe('with tight limits', () => {
  let app: AuthApp;
  beforeAll(async () => {
    app = await startAuthApp(`${authYaml([A])}limits: { max_turns_in_flight: 1, max_tools_per_tenant: 1, max_schema_bytes_compiled_per_minute_per_tenant: 3000 }
tools:
  - name: sleep
    effect: read_only
    builtin: { name: sleep }
`);
  });
  afterAll(() => app.close());

  test('OVERLOADED asks for a wait of 1 s; INVALID_ARGUMENT asks for none', async () => {
    const running = app.dispatch.dispatch({ sessionId: 'first', calls: [{ id: 'c', name: 'sleep', arguments: '{"ms":600}' }] }, bearer(A.token));
    await new Promise((r) => setTimeout(r, 150));
    const info = await failure(app.dispatch.dispatch({ sessionId: 'second', calls: [{ id: 'c', name: 'sleep', arguments: '{"ms":1}' }] }, bearer(A.token)));
    expect(info).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'OVERLOADED', retryDelayMs: 1000 });
    await running;
    const invalid = await failure(app.dispatch.dispatch({ sessionId: '', calls: [] }, bearer(A.token)));
    expect(invalid).toMatchObject({ reason: 'INVALID_ARGUMENT' });
    expect(invalid.retryDelayMs).toBeUndefined();
  });

  test('a spent compile budget is REGISTRY_BUSY with the wait its message names; the tenant at its tool count is REGISTRY_LIMIT, with no RetryInfo', async () => {
    const register = (tools: ReturnType<typeof spec>[]) => app.registry.registerTools({ tools, replace: true }, bearer(A.token));
    await register([spec('a1', 'v1')]);
    const busy = await failure(register([spec('a1', 'v2')]));
    expect(busy).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'REGISTRY_BUSY' });
    const seconds = Number(/try again in (\d+) s/.exec(busy.details)?.[1]);
    expect(seconds).toBeGreaterThan(0);
    expect(busy.retryDelayMs).toBe(seconds * 1000);
    // A second tool passes max_tools_per_tenant (checked before any compile), which waiting never mends.
    const full = await failure(register([{ ...spec('a2', 'v1'), inputSchema: '{"type":"object"}' }]));
    expect(full).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'REGISTRY_LIMIT' });
    expect(full.retryDelayMs).toBeUndefined();
  });
});

describe('draining', () => {
  let tools: ToolServer;
  beforeAll(async () => {
    tools = await startToolServer({ '/hang': () => undefined });
  });
  afterAll(() => tools.close());

  test('a turn cut by the end of the grace period is SHUTTING_DOWN, asking for a wait of 200 ms', async () => {
    const d = await startDispatch(`tools:\n  - name: hang\n    effect: read_only\n    timeout_ms: 10000\n    http: { url: "${tools.url}/hang" }\n`);
    try {
      const pending = failure(d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c0', name: 'hang', arguments: '{}' }] }));
      await new Promise((r) => setTimeout(r, 300));
      await d.server.shutdown(300);
      expect(await pending).toMatchObject({ code: grpc.status.UNAVAILABLE, reason: 'SHUTTING_DOWN', retryDelayMs: 200 });
    } finally {
      await d.close();
    }
  });
});
