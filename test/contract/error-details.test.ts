import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';
import { createWorkerClient } from '../../src/client';
import { startGuardedApp } from '../guards/helpers';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { authYaml, bearer, startAuthApp, type AuthApp } from '../security/support/auth-app';
import { failure, infoOf } from './error-info';

// Every RPC error dispatch answers carries a google.rpc.ErrorInfo (domain dispatch.v1) in
// grpc-status-details-bin: a reason a client in any language can branch on (docs/failures.md),
// and metadata with what is known (tool, tool_call_id, session_id, attempts, field...). Read here
// as any client reads it: the trailer of a real gRPC call, decoded as google.rpc.Status.

describe('without authentication', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>>;
  beforeAll(async () => {
    tools = await startToolServer({ '/broken': (_req, res) => void res.writeHead(500).end('down') });
    d = await startGuardedApp(
      `tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
  - name: same
    effect: read_only
    loop: { warn_threshold: 2, stop_threshold: 3 }
    builtin: { name: echo }
  - name: broken
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/broken" }
`,
      { reflector: { reflect: () => ({ retry: true, delayMs: 0, reason: 'try again' }) } },
    );
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test('LOOP_DETECTED names the call it refused (the 4th of 3 allowed), its tool and session', async () => {
    const calls = ['a1', 'a2', 'a3', 'a4'].map((id) => ({ id, name: 'same', arguments: '{"q":1}' }));
    const info = await failure(d.dispatch.dispatch({ sessionId: 'loop-s', calls }));
    expect(info).toMatchObject({ code: grpc.status.ABORTED, reason: 'LOOP_DETECTED', domain: 'dispatch.v1' });
    expect(info.details).toMatch(/^loop detected: same returned the same result the last 3 times/);
    // The calls that had ended, whose results the RPC loses (a side effect among them ran).
    expect(info.metadata).toEqual({ tool: 'same', tool_call_id: 'a4', session_id: 'loop-s', attempts: '1', calls_completed: '3', completed_call_ids: 'a1,a2,a3', completed_call_indexes: '0-2' });
  });

  test('a metadata value over 256 characters is left out, and past 1,024 bytes in all the request\'s session is', async () => {
    const long = await failure(d.dispatch.dispatch({ sessionId: 'x'.repeat(300), calls: [] }));
    expect(long).toMatchObject({ reason: 'INVALID_ARGUMENT', metadata: { field: 'session_id' } });
    expect(long.metadata.session_id).toBeUndefined();
    // 256 CJK characters are 768 bytes: the call's id (750 bytes) and the session's do not both fit.
    const sessionId = '語'.repeat(256);
    const calls = ['a1', 'a2', 'a3', 'a4'].map((id) => ({ id: '呼'.repeat(250) + id, name: 'same', arguments: '{"q":2}' }));
    const loop = await failure(d.dispatch.dispatch({ sessionId, calls }));
    expect(loop.reason).toBe('LOOP_DETECTED');
    // The ended calls' ids, past 128 characters, are left out; their count and places are not.
    expect(loop.metadata).toEqual({ tool: 'same', tool_call_id: `${'呼'.repeat(250)}a4`, attempts: '1', calls_completed: '3', completed_call_indexes: '0-2' });
  });

  test('RECOVERY_EXHAUSTED names the tool, the call, its attempts and the session', async () => {
    const info = await failure(d.dispatch.dispatch({ sessionId: 'rec-s', calls: [{ id: 'c9', name: 'broken', arguments: '{}' }] }));
    expect(info).toMatchObject({ code: grpc.status.ABORTED, reason: 'RECOVERY_EXHAUSTED', details: 'call c9 to "broken" failed 5 times; recovery gave up after 5 attempts' });
    expect(info.metadata).toEqual({ tool: 'broken', tool_call_id: 'c9', attempts: '5', session_id: 'rec-s' });
  });

  test.each([
    [{ sessionId: '', calls: [] }, 'session_id', 'session_id is required'],
    [{ sessionId: 's', calls: [{ id: 'ok', name: 'echo', arguments: '{}' }, { id: 'bad\u0007', name: 'echo', arguments: '{}' }] }, 'calls[1].id', /^calls\[1\]\.id holds U\+0007/],
    [{ sessionId: 's', calls: [], offeredTools: ['echo', 'x'.repeat(129)] }, 'offered_tools[1]', /^offered_tools\[1\] is 129 characters long/],
  ])('INVALID_ARGUMENT names the field (%#)', async (request, field, message) => {
    const info = await failure(d.dispatch.dispatch(request));
    expect(info).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: 'INVALID_ARGUMENT', details: expect.stringMatching(message) });
    expect(info.metadata.field).toBe(field);
  });

  test('a request that is not protobuf is MALFORMED_REQUEST, naming the message type', async () => {
    const raw = d.dispatch.raw;
    const error = await new Promise((resolve) => {
      raw.makeUnaryRequest('/dispatch.v1.DispatchService/Dispatch', (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x0a, 0x7f]), (e) => resolve(e));
    });
    const info = infoOf(error);
    expect(info).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: 'MALFORMED_REQUEST', metadata: { message_type: 'dispatch.v1.DispatchRequest' } });
  });

  test('ReadResult of an unknown handle is RESULT_NOT_FOUND; a registered name again is ALREADY_EXISTS with the spec', async () => {
    expect(await failure(d.dispatch.readResult({ resultHandle: 'nope' }))).toMatchObject({ code: grpc.status.NOT_FOUND, reason: 'RESULT_NOT_FOUND' });
    const info = await failure(d.registry.registerTools({ tools: [{ name: 'echo', inputSchema: '{"type":"object"}', executor: { case: 'builtin', value: { name: 'echo' } } }] }));
    expect(info).toMatchObject({ code: grpc.status.ALREADY_EXISTS, reason: 'ALREADY_EXISTS', metadata: { field: 'tools[0]' } });
  });

  test('a worker stream out of order ends FAILED_PRECONDITION OUT_OF_ORDER', async () => {
    const client = createWorkerClient(d.address);
    try {
      const call = client.work();
      call.on('error', () => undefined);
      const ended = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      call.write(create(WorkerMessageSchema, { msg: { case: 'completion', value: { assignmentId: 'nope', output: 'x' } } }));
      expect(infoOf(await ended)).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, reason: 'OUT_OF_ORDER', details: 'a completion arrived before hello' });
    } finally {
      client.close();
    }
  });
});

describe('with tokens and tight limits', () => {
  const A = { token: 'tok-a', tenant: 'acme', scopes: ['dispatch', 'subscribe'] };
  const READER = { token: 'tok-r', tenant: 'acme', scopes: ['subscribe'] };
  let app: AuthApp;
  beforeAll(async () => {
    app = await startAuthApp(`${authYaml([A, READER])}limits: { max_turns_in_flight: 1, max_subscribers_per_tenant: 1 }
tools:
  - name: sleep
    effect: read_only
    builtin: { name: sleep }
`);
  });
  afterAll(() => app.close());

  test('no token is UNAUTHENTICATED; a token without the scope is PERMISSION_DENIED, naming the scope and tenant', async () => {
    expect(await failure(app.dispatch.dispatch({ sessionId: 's', calls: [] }))).toMatchObject({ code: grpc.status.UNAUTHENTICATED, reason: 'UNAUTHENTICATED' });
    const info = await failure(app.dispatch.dispatch({ sessionId: 'p-s', calls: [] }, bearer(READER.token)));
    expect(info).toMatchObject({ code: grpc.status.PERMISSION_DENIED, reason: 'PERMISSION_DENIED' });
    expect(info.metadata).toEqual({ scope: 'dispatch', tenant: 'acme', session_id: 'p-s' });
  });

  test('a turn past max_turns_in_flight is OVERLOADED with its session', async () => {
    const running = app.dispatch.dispatch({ sessionId: 'first', calls: [{ id: 'c', name: 'sleep', arguments: '{"ms":600}' }] }, bearer(A.token));
    await new Promise((r) => setTimeout(r, 150));
    const info = await failure(app.dispatch.dispatch({ sessionId: 'second', calls: [{ id: 'c', name: 'sleep', arguments: '{"ms":1}' }] }, bearer(A.token)));
    expect(info).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'OVERLOADED', metadata: { session_id: 'second' } });
    await running;
  });

  test('a Subscribe past max_subscribers_per_tenant is SUBSCRIBER_LIMIT, naming the tenant; a bad filter names its field', async () => {
    const first = app.dispatch.subscribe({}, bearer(A.token)) as unknown as grpc.ClientReadableStream<unknown>;
    first.on('error', () => undefined);
    first.on('data', () => undefined);
    await new Promise<void>((resolve) => first.once('metadata', () => resolve()));
    const status = (request: object) =>
      new Promise<grpc.StatusObject>((resolve) => {
        const stream = app.dispatch.subscribe(request, bearer(A.token)) as unknown as grpc.ClientReadableStream<unknown>;
        stream.on('error', () => undefined);
        stream.on('data', () => undefined);
        stream.on('status', resolve);
      });
    const second = infoOf(await status({}));
    expect(second).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, reason: 'SUBSCRIBER_LIMIT', metadata: { tenant: 'acme' } });
    expect(infoOf(await status({ kinds: [0] }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: 'INVALID_ARGUMENT', metadata: { field: 'kinds' } });
    first.cancel();
  });
});
