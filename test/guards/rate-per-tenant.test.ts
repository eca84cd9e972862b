import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import type { DispatchError } from '../../src/errors';
import { createToolRates } from '../../src/guards';
import type { RatePolicy } from '../../src/guards/policy-types';
import { createAbortScope } from '../../src/pipeline';
import type { TestRedis } from '../helpers/redis-server';
import { json, type ToolServer } from '../helpers/servers';
import { closeReplicaPair, startReplicaPair, type Replica } from './replica-pair';
import { callAs, callsOf, plainTool, TWO_TENANTS_AUTH } from './two-tenants';

// `rate: { ..., per_tenant: true }` on a tool of the config file: each calling tenant has its own
// limit of that rate, per replica or, with `shared: true`, for every replica together through
// Redis. Before, the limit was one for all tenants: one tenant's burst spent it and every other
// tenant's calls were refused UNAVAILABLE until it refilled.

jest.setTimeout(30_000);

const yaml = (url: string) => `${TWO_TENANTS_AUTH}
tools:
${plainTool(url, 'send')}${plainTool(url, 'post')}
policies:
  - match: send
    rate: { per_minute: 2, burst: 2, per_tenant: true }
  - match: post
    rate: { per_minute: 2, burst: 2, per_tenant: true, shared: true }
`;

let redis: TestRedis;
let tools: ToolServer;
let a: Replica;
let b: Replica;
beforeAll(async () => ({ redis, tools, a, b } = await startReplicaPair(yaml, { '/send': json({ ok: true }), '/post': json({ ok: true }) })));
afterAll(() => closeReplicaPair({ redis, tools, a, b }));
beforeEach(() => tools.received.splice(0));

const outcomes = (results: readonly { readonly error?: { readonly message: string } }[]) => results.map((r) => r.error?.message.replace(/in \d+ ms/, 'in N ms') ?? 'ok');

test("one tenant spending its limit leaves the other tenant's own limit whole", async () => {
  const mine = [];
  for (let i = 0; i < 3; i++) mine.push(await callAs(a, 'acme', 'send'));
  expect(outcomes(mine)).toEqual(['ok', 'ok', 'tool "send" is at its rate limit of 2 calls per minute (burst 2) for this tenant on this dispatch replica; its next turn is in N ms; this call was not executed']);
  expect(mine[2]!.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(mine[2]!.error?.retryAfterMs).toBeGreaterThan(25_000);
  const theirs = [];
  for (let i = 0; i < 3; i++) theirs.push(await callAs(a, 'globex', 'send'));
  expect(outcomes(theirs)).toEqual(['ok', 'ok', 'tool "send" is at its rate limit of 2 calls per minute (burst 2) for this tenant on this dispatch replica; its next turn is in N ms; this call was not executed']);
  expect([callsOf(tools.received, 'acme', '/send').length, callsOf(tools.received, 'globex', '/send').length]).toEqual([2, 2]);
});

test("shared: each tenant's limit holds for both replicas together, and one tenant's burst leaves the other's whole", async () => {
  const mine = [];
  for (const app of [a, b, a]) mine.push(await callAs(app, 'acme', 'post'));
  expect(outcomes(mine)).toEqual(['ok', 'ok', 'tool "post" is at its rate limit of 2 calls per minute (burst 2) for this tenant on all dispatch replicas together; its next turn is in N ms; this call was not executed']);
  const theirs = [];
  for (const app of [b, a, b]) theirs.push(await callAs(app, 'globex', 'post'));
  expect(outcomes(theirs)).toEqual(['ok', 'ok', 'tool "post" is at its rate limit of 2 calls per minute (burst 2) for this tenant on all dispatch replicas together; its next turn is in N ms; this call was not executed']);
  expect([callsOf(tools.received, 'acme', '/post').length, callsOf(tools.received, 'globex', '/post').length]).toEqual([2, 2]);
});

test("a replica keeps its per-tenant limits as its other limits: 10,000 at most, the oldest forgotten first, each tenant's own", () => {
  const policy: RatePolicy = { match: ['*'], perSecond: 1 / 60, burst: 1, waitMs: 0, shared: false, perTenant: true, text: '1 call per minute' };
  const rates = createToolRates([policy])!;
  const tool = { tenant: '', name: 'send', timeoutMs: 30_000 };
  const take = (caller: string) => rates.take(tool, createAbortScope().signal, Date.now() + 60_000, caller);
  const refusal = (caller: string) => {
    try {
      take(caller);
    } catch (error) {
      return (error as DispatchError).message;
    }
    return 'ok';
  };
  // 12,000 tenants each spend their own limit of the one tool: more limits than a replica keeps.
  for (let i = 0; i < 12_000; i++) {
    expect(take(`t${i}`)).toBeUndefined();
    expect(refusal(`t${i}`)).toMatch(/^tool "send" is at its rate limit of 1 call per minute \(burst 1\) for this tenant on this dispatch replica; its next turn is in \d+ ms/);
  }
  // Refusals count under each tenant's key of the tool, bounded as every refusal count.
  expect(rates.refused().get('t0/send')).toBe(1);
  expect(rates.refused().size).toBeLessThanOrEqual(10_001);
  // The oldest limits were forgotten to stay within the bound; the latest are kept.
  expect(take('t0')).toBeUndefined();
  expect(refusal('t11999')).not.toBe('ok');
  expect(take('quiet')).toBeUndefined();
});
