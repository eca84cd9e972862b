import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { closedPort, errorJson, startGuardedApp, until } from './helpers';

const tool = (url: string) => `
tools:
  - name: payments.charge
    effect: side_effect
    input_schema: '{"type":"object","properties":{"amount":{"type":"number"},"currency":{"type":"string"},"debug":{"type":"boolean"}},"required":["amount"],"additionalProperties":false}'
    http: { url: "${url}/charge" }
  - name: search
    effect: read_only
    input_schema: '{"type":"object"}'
    http: { url: "${url}/search" }
`;
const charge = (id: string, args: object) => ({ id, name: 'payments.charge', arguments: JSON.stringify(args) });

describe('policies through the gRPC service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startGuardedApp>> | undefined;
  beforeEach(async () => {
    tools = await startToolServer({
      '/charge': json({ charged: true }),
      '/search': json({ hits: ['deprecated api'] }),
      '/policy-fail': json({ error: 'boom' }, 0, 500),
      '/policy-slow': json({ decision: 'allow' }, 1000),
      '/policy-modify': json({ decision: 'modify', reason: 'capped', arguments: { amount: 5, currency: 'USD' } }),
      '/policy-garbage': (_req, res) => void res.writeHead(200).end('yes please'),
      '/policy-null': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('null'),
      '/policy-array': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[{"decision":"allow"}]'),
      '/policy-string': (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('"allow"'),
    });
  });
  afterEach(async () => {
    await d?.close();
    d = undefined;
    await tools.close();
  });
  const start = async (policies: string, limits = '') => (d = await startGuardedApp(`${tool(tools.url)}${limits}\npolicies:\n${policies}`));

  test('a rule blocks a call above its threshold, and not at it', async () => {
    await start(`
  - match: "payments.*"
    when: [{ pointer: /amount, op: ">", value: 1000 }]
    decide: block
    reason: payments over 1000 need a human`);
    const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 1000 }), charge('c2', { amount: 1000.5 })] });
    expect(res.results[0]!.isError).toBe(false);
    const blocked = res.results[1]!;
    expect(blocked.error?.kind).toBe(ErrorKind.BLOCKED);
    expect(errorJson(blocked.output).message).toBe('blocked by policy: payments over 1000 need a human');
    expect(tools.count('/charge')).toBe(1);
  });

  test('a rule modifies the arguments and the tool receives the modified ones', async () => {
    await start(`
  - match: ["payments.charge"]
    decide: modify
    set: { /currency: EUR }
    remove: [/debug]`);
    const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 10, currency: 'GBP', debug: true })] });
    expect(res.results[0]!.output).toBe('{"charged":true}');
    expect(tools.received[0]!.body.arguments).toEqual({ amount: 10, currency: 'EUR' });
  });

  test('a policy endpoint that fails refuses the call (fail closed), and is told the call', async () => {
    await start(`
  - endpoint: { url: "${tools.url}/policy-fail" }`);
    const res = await d!.dispatch.dispatch({ sessionId: 's1', calls: [charge('c1', { amount: 3 })] });
    // A failing service (5xx) may answer later: UNAVAILABLE, recoverable, not a decision to block ("do not retry").
    expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'UNAVAILABLE', recoverable: true, retry_after_ms: 1000, message: 'the policy service could not be consulted (it answered HTTP 500), so the call was not executed' });
    expect(tools.count('/charge')).toBe(0);
    expect(tools.received[0]!.body).toEqual({ tool: 'payments.charge', arguments: { amount: 3 }, session_id: 's1', tenant: 'default' });
  });

  test('a policy endpoint that does not answer in time refuses the call for now, one that answers nonsense blocks it', async () => {
    await start(`
  - match: payments.*
    endpoint: { url: "${tools.url}/policy-slow", timeout_ms: 100 }`);
    const started = Date.now();
    const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 3 }), { id: 'c2', name: 'search', arguments: '{}' }] });
    expect(Date.now() - started).toBeLessThan(900);
    expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'UNAVAILABLE', recoverable: true, message: 'the policy service could not be consulted (no answer within 100 ms), so the call was not executed' });
    expect(res.results[1]!.isError).toBe(false);
    expect(tools.count('/charge')).toBe(0);
    await d!.close();
    await start(`
  - endpoint: { url: "${tools.url}/policy-garbage" }`);
    const garbage = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 3 })] });
    expect(errorJson(garbage.results[0]!.output).message).toContain('its answer is not JSON');
  });

  test('a policy endpoint answering JSON that is not an object (null, an array, a string) blocks the call, saying so', async () => {
    for (const answer of ['null', 'array', 'string']) {
      await start(`
  - endpoint: { url: "${tools.url}/policy-${answer}" }`);
      const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 3 })] });
      expect(errorJson(res.results[0]!.output)).toMatchObject({ kind: 'BLOCKED', message: 'blocked by policy: the policy service could not be consulted (its answer is not a JSON object), so the call was refused' });
      await d!.close();
      d = undefined;
    }
    expect(tools.count('/charge')).toBe(0);
  });

  test('fail_open lets the call through when the endpoint fails; an endpoint may modify the arguments', async () => {
    await start(`
  - endpoint: { url: "http://127.0.0.1:${await closedPort()}/unreachable", fail_open: true }`);
    const open = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 3 })] });
    expect(open.results[0]!.isError).toBe(false);
    await d!.close();
    await start(`
  - endpoint: { url: "${tools.url}/policy-modify" }`);
    const modified = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c2', { amount: 5000 })] });
    expect(modified.results[0]!.isError).toBe(false);
    expect(tools.received.filter((r) => r.path === '/charge').map((r) => r.body.arguments)).toEqual([{ amount: 3 }, { amount: 5, currency: 'USD' }]);
  });

  describe('Ask', () => {
    const askRule = `
  - decide: modify
    set: { /currency: EUR }
  - match: payments.*
    when: [{ pointer: /amount, op: ">=", value: 100 }]
    decide: ask
    reason: large payment`;

    test('headless: blocked at once', async () => {
      await start(askRule);
      const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [charge('c1', { amount: 100 })] });
      expect(errorJson(res.results[0]!.output).message).toBe('needs approval, and this dispatch is headless: large payment');
      expect(d!.events.filter((e) => e.kind === 'APPROVAL_REQUESTED')).toEqual([]);
    });

    test('interactive: APPROVAL_REQUESTED, then ResolveApproval approves and the call runs with the modified arguments', async () => {
      await start(askRule);
      const pending = d!.dispatch.dispatch({ sessionId: 's', interactive: true, calls: [charge('c1', { amount: 150 })] });
      await until(() => d!.events.some((e) => e.kind === 'APPROVAL_REQUESTED'));
      const request = d!.events.find((e) => e.kind === 'APPROVAL_REQUESTED')!;
      expect(request).toMatchObject({ tool: 'payments.charge', toolCallId: 'c1' });
      expect(tools.count('/charge')).toBe(0);
      expect((await d!.dispatch.resolveApproval({ approvalId: 'not-an-id', approve: true })).resolved).toBe(false);
      expect((await d!.dispatch.resolveApproval({ approvalId: request.detail, approve: true, reason: 'ok by me' })).resolved).toBe(true);
      const res = await pending;
      expect(res.results[0]!.output).toBe('{"charged":true}');
      expect(tools.received[0]!.body.arguments).toEqual({ amount: 150, currency: 'EUR' });
      expect((await d!.dispatch.resolveApproval({ approvalId: request.detail, approve: true })).resolved).toBe(false);
    });

    test('interactive: a denial or no answer within the approval timeout blocks the call', async () => {
      await start(askRule, '\nlimits: { approval_timeout_ms: 300 }');
      const started = Date.now();
      const timedOut = await d!.dispatch.dispatch({ sessionId: 's', interactive: true, calls: [charge('c1', { amount: 150 })] });
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(errorJson(timedOut.results[0]!.output).message).toBe('approval timed out: no approver answered within 0.3 s, so the call was not executed: large payment');
      const denied = d!.dispatch.dispatch({ sessionId: 's', interactive: true, calls: [charge('c2', { amount: 160 })] });
      await until(() => d!.events.filter((e) => e.kind === 'APPROVAL_REQUESTED').length === 2);
      const id = d!.events.filter((e) => e.kind === 'APPROVAL_REQUESTED')[1]!.detail;
      expect((await d!.dispatch.resolveApproval({ approvalId: id, approve: false })).resolved).toBe(true);
      expect(errorJson((await denied).results[0]!.output).kind).toBe('BLOCKED');
      expect(tools.count('/charge')).toBe(0);
    });

    test('ResolveApproval is authenticated and decides only its own tenant\'s approvals', async () => {
      const sha = (token: string) => createHash('sha256').update(token).digest('hex');
      const auth = `\nauth:\n  tokens:\n    - { tenant: acme, scopes: [dispatch], sha256: ${sha('token-a')} }\n    - { tenant: globex, scopes: [dispatch], sha256: ${sha('token-b')} }`;
      await start(askRule, auth);
      const as = (token: string) => ({ metadata: { authorization: `Bearer ${token}` } });
      const pending = d!.dispatch.dispatch({ sessionId: 's', interactive: true, calls: [charge('c1', { amount: 150 })] }, as('token-a'));
      await until(() => d!.events.some((e) => e.kind === 'APPROVAL_REQUESTED'));
      const id = d!.events.find((e) => e.kind === 'APPROVAL_REQUESTED')!.detail;
      await expect(d!.dispatch.resolveApproval({ approvalId: id, approve: true })).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
      expect((await d!.dispatch.resolveApproval({ approvalId: id, approve: true }, as('token-b'))).resolved).toBe(false);
      expect((await d!.dispatch.resolveApproval({ approvalId: id, approve: true }, as('token-a'))).resolved).toBe(true);
      expect((await pending).results[0]!.isError).toBe(false);
    });

    test('ResolveApproval without an id is INVALID_ARGUMENT', async () => {
      await start(askRule);
      await expect(d!.dispatch.resolveApproval({ approvalId: '' })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'approval_id is required' });
    });
  });

  test('an after rule annotates matching outputs', async () => {
    await start(`
  - match: search
    after: { on: success, contains: deprecated, warn: "the results mention a deprecated API; check the migration guide" }`);
    const res = await d!.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'search', arguments: '{}' }, charge('c2', { amount: 1 })] });
    expect(res.results[0]!.warnings).toContain('the results mention a deprecated API; check the migration guide');
    expect(res.results[1]!.warnings).toEqual([]);
  });
});
