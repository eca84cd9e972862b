import { DispatchMode, ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { buildApp, PLUGINS, type App } from '../../src/app';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { createDispatchClient } from '../../src/client';
import { parseConfig } from '../../src/config';
import { createLogger, SILENT_LOGGER, type Logger } from '../../src/log';
import { storePlugin } from '../../src/app/plugins/store-plugin';
import { createMemoryStore, StoreUnavailableError, type Store } from '../../src/store';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { recordingObserver, until, type SeenEvent } from './helpers';

// A tool under both a session budget and an `ask` rule: the budget is counted before an approver
// is asked, in sequential and parallel turns alike, with either store. A call the budget refuses
// is refused unasked (no APPROVAL_REQUESTED, nothing in ListApprovals), and a call that was asked
// about holds its count, so a sibling of its turn cannot spend it while it waits: an approved call
// is never then refused by the budget. Before, the budget was counted only after the approval.
// A call not approved (denied, expired, its session ended) gives its count back, once: before, a
// denied call spent the session's budget. An approved call its concurrency cap then refuses (before
// it ran) gives its count back too: before, the session's next call was refused by the budget. So
// does one whose client cancels while it waits for its slot: before, its count stayed.

jest.setTimeout(20_000);

// Each store runs its tests in order, the two stores at once (most of the time is waiting: the slow
// tool holding its slot, approvals expiring). Each store has its own apps and tool server, so that
// neither sees the other's calls nor counts them; each test awaits its store's run of it, all
// started in beforeAll. The last tests (a store of their own) run after them, on the first tool server.

let redis: TestRedis;
let tools: ToolServer;
const toolServers: ToolServer[] = [];
const apps: App[] = [];
const clients: ReturnType<typeof createDispatchClient>[] = [];
const startTools = async () => {
  const server = await startToolServer({ '/charge': json({ charged: true }), '/lookup': json({ found: true }), '/slow': json({ charged: true }, 800) });
  toolServers.push(server);
  return server;
};
const STORES = [
  ['the memory store', false],
  ['Redis', true],
] as const;
/** Each store's run of each test (keyed `${store}: ${test}`), started in beforeAll. */
const runs = new Map<string, Promise<void>>();
beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startTools();
  const sides = [];
  for (const [store, shared] of STORES) sides.push({ store, side: await startStore(shared, store === STORES[0][0] ? tools : await startTools()) });
  for (const { store, side } of sides) {
    let previous: Promise<unknown> = Promise.resolve();
    for (const [name, body] of TESTS) {
      const run = previous.then(() => body(side));
      run.catch(() => undefined);
      runs.set(`${store}: ${name}`, run);
      previous = run.catch(() => undefined);
    }
  }
});
afterAll(async () => {
  await Promise.allSettled(runs.values());
  for (const c of clients) c.close();
  for (const a of apps) await a.close(200);
  for (const server of toolServers) await server.close();
  await redis.close();
});

async function start(redisUrl?: string, approvalTimeoutMs = 10_000, own?: { store: Store; logger: Logger }, on = tools) {
  const recording = recordingObserver();
  const factories = PLUGINS.map((f) =>
    f === observabilityPlugin ? async () => ({ name: 'recorder', observer: recording.observer }) : own && f === storePlugin ? async () => ({ name: 'store', store: own.store }) : f,
  );
  const yaml = `
tools:
  - name: charge
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${on.url}/charge" }
  - name: lookup
    effect: read_only
    concurrency_safe: true
    input_schema: '{"type":"object"}'
    http: { url: "${on.url}/lookup" }
  - name: capped
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${on.url}/slow" }
  - name: queued
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${on.url}/slow" }
policies:
  - match: ["charge", "lookup"]
    budget: { max_calls_per_session: 1 }
  - match: ["charge", "lookup"]
    decide: ask
    reason: needs ok
  - match: capped
    budget: { max_calls_per_session: 1 }
  - match: capped
    decide: ask
    reason: needs ok
  - match: capped
    concurrency: { max_in_flight: 1, wait_ms: 100 }
  - match: queued
    budget: { max_calls_per_session: 1 }
  - match: queued
    decide: ask
    reason: needs ok
  - match: queued
    concurrency: { max_in_flight: 1, wait_ms: 5000 }
limits: { approval_timeout_ms: ${approvalTimeoutMs} }
`;
  const app = await buildApp(parseConfig(yaml, 't.yaml'), { logger: own?.logger ?? SILENT_LOGGER, redisUrl }, factories);
  apps.push(app);
  const server = await app.listen('127.0.0.1:0');
  const client = createDispatchClient(`127.0.0.1:${server.port}`);
  clients.push(client);
  return { client, events: recording.events };
}

const asked = (events: SeenEvent[], session: string) => events.filter((e) => e.kind === 'APPROVAL_REQUESTED' && e.toolCallId?.startsWith(session)).map((e) => e.detail);
const OVER = 'this session has used its budget of 1 call of tools matching charge,lookup (policies budget:); this call was not executed';
/** What a call of the brief app (approval timeout 300 ms) nobody approved reads. */
const EXPIRED = 'approval timed out: no approver answered within 0.3 s, so the call was not executed: needs ok';

/** One store's apps (on its own tool server), and its calls. */
async function startStore(shared: boolean, tools: ToolServer) {
  const d = await start(shared ? redis.url : undefined, 10_000, undefined, tools);
  // Its approvals expire unanswered after 300 ms.
  const brief = await start(shared ? redis.url : undefined, 300, undefined, tools);
  const callOf = (tool: string) => (session: string, n: number, signal?: AbortSignal) =>
    d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c${n}`, name: tool, arguments: `{"n":${n}}` }] }, { signal });
  const approveNext = async (session: string, count: number) => {
    await until(() => asked(d.events, session).length === count);
    await d.client.resolveApproval({ approvalId: asked(d.events, session)[count - 1]!, approve: true });
  };
  /** Another session's approved call of `tool` holds its one slot for 800 ms, once the tool server has it. */
  const holdSlot = async (tool: string, session: string) => {
    const received = tools.count('/slow');
    const holder = callOf(tool)(session, 1);
    await approveNext(session, 1);
    await until(() => tools.count('/slow') > received);
    return { holder, received };
  };
  /** Nothing of `session` ran: its next call of `tool` is asked about, not refused by the budget, and runs. */
  const nextCallRuns = async (tool: string, session: string) => {
    const second = callOf(tool)(session, 2);
    await approveNext(session, 2);
    const ran = (await second).results[0]!;
    expect(ran.isError).toBe(false);
    expect(ran.warnings).toContain(`this was the last call of this session's budget of 1 call of "${tool}" (policies budget:)`);
  };
  return { shared, d, brief, tools, callOf, approveNext, holdSlot, nextCallRuns };
}
type Side = Awaited<ReturnType<typeof startStore>>;

/** A turn of two calls of `tool` in `mode` under a budget of one: the one past it is refused unasked. */
async function pastTheBudget({ shared, d, tools }: Side, modeName: string, mode: DispatchMode, tool: string): Promise<void> {
  const session = `${modeName}-${shared}-${tool}`;
  const calls = [1, 2].map((i) => ({ id: `${session}-c${i}`, name: tool, arguments: `{"n":${i}}` }));
  const before = tools.count(`/${tool}`);
  const turn = d.client.dispatch({ sessionId: session, interactive: true, mode, calls });
  await until(() => asked(d.events, session).length >= 1);
  // The second call is not waiting for anyone (parallel: it ran beside the first, and was refused at once).
  await new Promise((r) => setTimeout(r, 150));
  const listed = (await d.client.listApprovals({ sessionId: session })).approvals;
  expect(listed.map((a) => a.toolCallId)).toEqual(mode === DispatchMode.SEQUENTIAL ? [`${session}-c1`] : [expect.any(String)]);
  const approvalId = asked(d.events, session)[0]!;
  expect((await d.client.resolveApproval({ approvalId, approve: true })).resolved).toBe(true);
  const results = (await turn).results;
  const ran = results.filter((r) => !r.isError);
  const refused = results.filter((r) => r.isError);
  expect(ran).toHaveLength(1);
  expect(ran[0]!.toolCallId).toBe(listed[0]!.toolCallId);
  expect(ran[0]!.warnings).toContain("this was the last call of this session's budget of 1 call of tools matching charge,lookup (policies budget:)");
  expect(refused).toHaveLength(1);
  expect(refused[0]!.error?.kind).toBe(ErrorKind.BLOCKED);
  expect(refused[0]!.error?.message).toBe(OVER);
  // Only the call that ran was ever put to an approver.
  expect(asked(d.events, session)).toEqual([approvalId]);
  expect(tools.count(`/${tool}`) - before).toBe(1);
}

/** The tests each store runs, in this order. */
const TESTS: [string, (side: Side) => Promise<void>][] = [
  ['sequential: the call past the budget is refused unasked; the one asked about runs once approved', (side) => pastTheBudget(side, 'sequential', DispatchMode.SEQUENTIAL, 'charge')],
  ['parallel: the call past the budget is refused unasked; the one asked about runs once approved', (side) => pastTheBudget(side, 'parallel', DispatchMode.PARALLEL, 'lookup')],
  ['a denied call gives its count back: the next call is asked about, not refused, and runs once approved', async ({ shared, d, tools }) => {
    const session = `denied-${shared}`;
    const first = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c1`, name: 'charge', arguments: '{}' }] });
    await until(() => asked(d.events, session).length === 1);
    await d.client.resolveApproval({ approvalId: asked(d.events, session)[0]!, approve: false });
    const denied = (await first).results[0]!;
    expect(denied.error?.message).toBe('approval was not granted: needs ok');
    // Its count went back, and with it the budget's warning.
    expect(denied.warnings.filter((w) => w.includes('budget'))).toEqual([]);
    const before = tools.count('/lookup');
    const second = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c2`, name: 'lookup', arguments: '{}' }] });
    await until(() => asked(d.events, session).length === 2);
    await d.client.resolveApproval({ approvalId: asked(d.events, session)[1]!, approve: true });
    const ran = (await second).results[0]!;
    expect(ran.isError).toBe(false);
    expect(ran.warnings).toContain("this was the last call of this session's budget of 1 call of tools matching charge,lookup (policies budget:)");
    expect(tools.count('/lookup') - before).toBe(1);
    // Given back once: the budget is spent now.
    const third = (await d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c3`, name: 'charge', arguments: '{}' }] })).results[0]!;
    expect(third.error?.message).toBe(OVER);
    expect(asked(d.events, session)).toHaveLength(2);
  }],

  ['an approved call its concurrency cap refuses gives its count back: the next call of its session is asked about and runs', async ({ shared, callOf, approveNext, holdSlot, nextCallRuns }) => {
    const { holder } = await holdSlot('capped', `holder-${shared}`);
    const session = `capped-${shared}`;
    const first = callOf('capped')(session, 1);
    await approveNext(session, 1);
    const refused = (await first).results[0]!;
    expect(refused.error?.kind).toBe(ErrorKind.UNAVAILABLE);
    expect(refused.error?.message).toMatch(/stayed at its limit of 1 call running at once/);
    expect(refused.warnings.filter((w) => w.includes('budget'))).toEqual([]);
    expect((await holder).results[0]!.isError).toBe(false);
    await nextCallRuns('capped', session);
  }],

  ['an approved call cancelled by its client while it waits for its slot gives its count back', async ({ shared, tools, callOf, approveNext, holdSlot, nextCallRuns }) => {
    // This one would wait up to 5 s for the slot.
    const { holder, received } = await holdSlot('queued', `queue-holder-${shared}`);
    const session = `cancelled-${shared}`;
    const cancel = new AbortController();
    const first = callOf('queued')(session, 1, cancel.signal);
    await approveNext(session, 1);
    await new Promise((r) => setTimeout(r, 150));
    cancel.abort();
    await expect(first).rejects.toThrow(/CANCELLED|Cancelled/);
    expect((await holder).results[0]!.isError).toBe(false);
    expect(tools.count('/slow') - received).toBe(1);
    await nextCallRuns('queued', session);
  }],

  ['a call whose approval expires gives its count back, once, whichever of a parallel turn it was', async ({ shared, brief }) => {
    const session = `expired-${shared}`;
    const calls = [1, 2].map((i) => ({ id: `${session}-c${i}`, name: 'lookup', arguments: `{"n":${i}}` }));
    // Parallel: one call is counted and asked about, the other refused unasked; the asked one expires.
    const results = (await brief.client.dispatch({ sessionId: session, interactive: true, mode: DispatchMode.PARALLEL, calls })).results;
    expect(results.map((r) => r.error?.message).sort()).toEqual([EXPIRED, OVER].sort());
    expect(asked(brief.events, session)).toHaveLength(1);
    // The next call is asked about (and expires too), and the one after it as well: nothing stayed counted.
    for (const n of [2, 3]) {
      const next = (await brief.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-n${n}`, name: 'charge', arguments: '{}' }] })).results[0]!;
      expect(next.error?.message).toBe(EXPIRED);
      expect(asked(brief.events, session)).toHaveLength(n);
    }
  }],

  ['a call whose session ends while it waits leaves the new session its whole budget', async ({ shared, d }) => {
    const session = `ended-${shared}`;
    const first = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c1`, name: 'charge', arguments: '{}' }] });
    await until(() => asked(d.events, session).length === 1);
    await d.client.endSession({ sessionId: session });
    expect((await first).results[0]!.error?.message).toBe('the session ended while the call waited for approval, so it was not executed: needs ok');
    const second = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c2`, name: 'charge', arguments: '{}' }] });
    await until(() => asked(d.events, session).length === 2);
    await d.client.resolveApproval({ approvalId: asked(d.events, session)[1]!, approve: true });
    expect((await second).results[0]!.isError).toBe(false);
  }],
];

describe.each(STORES)('with %s', (store) => {
  for (const [name] of TESTS) {
    test(name, async () => {
      const run = runs.get(`${store}: ${name}`);
      if (!run) throw new Error(`the ${store} run of this test was not started`);
      await run;
    });
  }
});

test('a store that fails to give the count back leaves it spent: the denial is told as ever, and the failure logged', async () => {
  const real = createMemoryStore();
  const store: Store = { ...real, giveBackBudget: () => Promise.reject(new StoreUnavailableError('redis down')) };
  const lines: string[] = [];
  const d = await start(undefined, 10_000, { store, logger: createLogger('warn', (line) => lines.push(line) > 0) });
  const session = 'give-back-fails';
  const first = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c1`, name: 'charge', arguments: '{}' }] });
  await until(() => asked(d.events, session).length === 1);
  await d.client.resolveApproval({ approvalId: asked(d.events, session)[0]!, approve: false });
  expect((await first).results[0]!.error?.message).toBe('approval was not granted: needs ok');
  expect(lines.filter((l) => l.includes('give back the budget count'))).toHaveLength(1);
  const second = (await d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c2`, name: 'lookup', arguments: '{}' }] })).results[0]!;
  expect(second.error?.message).toBe(OVER);
});

test('a count given back is given back here too: while the store is away, the session still has its call', async () => {
  const real = createMemoryStore();
  let down = false;
  const unavailable = () => Promise.reject(new StoreUnavailableError('redis down'));
  const store: Store = { ...real, beginAttempt: (step) => (down ? unavailable() : real.beginAttempt(step)) };
  const d = await start(undefined, 10_000, { store, logger: SILENT_LOGGER });
  const session = 'given-back-here';
  const first = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c1`, name: 'charge', arguments: '{}' }] });
  await until(() => asked(d.events, session).length === 1);
  await d.client.resolveApproval({ approvalId: asked(d.events, session)[0]!, approve: false });
  expect((await first).results[0]!.error?.message).toBe('approval was not granted: needs ok');
  // The store goes away: a read-only call runs on this replica's own count, which the give-back lowered.
  down = true;
  const second = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c2`, name: 'lookup', arguments: '{}' }] });
  await until(() => asked(d.events, session).length === 2);
  await d.client.resolveApproval({ approvalId: asked(d.events, session)[1]!, approve: true });
  const result = (await second).results[0]!;
  expect(result.error).toBeUndefined();
  expect(result.isError).toBe(false);
});

test('a count taken by a step answered too late is given back all the same when the approval is not granted', async () => {
  const real = createMemoryStore();
  let late = true;
  // The step counts, then its answer is lost (as a Redis step past its timeout that ran all the same).
  const store: Store = {
    ...real,
    beginAttempt: async (step) => {
      const begun = await real.beginAttempt(step);
      if (!late) return begun;
      late = false;
      throw new StoreUnavailableError('timed out');
    },
  };
  const d = await start(undefined, 10_000, { store, logger: SILENT_LOGGER });
  const session = 'late-count';
  const first = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c1`, name: 'charge', arguments: '{}' }] });
  await until(() => asked(d.events, session).length === 1);
  await d.client.resolveApproval({ approvalId: asked(d.events, session)[0]!, approve: false });
  expect((await first).results[0]!.error?.message).toBe('approval was not granted: needs ok');
  // Asked about, not refused over the budget: the late count went back.
  const second = d.client.dispatch({ sessionId: session, interactive: true, calls: [{ id: `${session}-c2`, name: 'lookup', arguments: '{}' }] });
  await until(() => asked(d.events, session).length === 2);
  await d.client.resolveApproval({ approvalId: asked(d.events, session)[1]!, approve: true });
  expect((await second).results[0]!.isError).toBe(false);
});
