import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { storePlugin } from '../../src/app/plugins/store-plugin';
import { createMemoryStore, type Store } from '../../src/store';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';
import { recordingObserver, type SeenEvent } from './helpers';

// A call under a session budget and an `ask` rule whose op its tool's loop block refuses: the
// step that counts it before the approver is asked (countBeforeAsking) passes the block too, so
// the call is refused LOOP_BLOCKED there, unasked. One refused for the probe another call holds is
// counted nowhere. Before, it was counted and its approver asked, and the store step after the
// approval refused it for the held probe all the same, its count spent. That step only peeks at
// the probe: the approved call takes it when it runs, and a call waiting for its approver holds
// nothing (before, it took the probe and gave it back a round trip later; a call arriving between
// was refused "another call of it is running" while none ran). So another call can take the probe
// while one waits for its approver: approved then, that one is refused for the probe, and the
// count taken before asking goes back (before, it stayed spent). A tool with no budget (or no
// budget policies at all) has its block read before asking all the same. Real HTTP tool, both stores.

jest.setTimeout(30_000);

/** How long the tool takes to fail: a probe is in flight so long. */
const ANSWER_MS = 500;
const COOLDOWN_MS = 300;

// Each store runs its tests in order, the three stores at once (most of the time is waiting: the
// slow store's 300 ms steps, cool-downs, the probe's answer). Each store has its own app and tool
// server, so that no store sees another's calls nor counts them; each test awaits its store's run
// of it, all started in beforeAll.

/** ACME fails, slowly unless `fast` (the op is the primary parameter's: the same op either way): its op gets blocked; any other symbol answers. */
const quoteRoute: ToolRoute = (req, res) => {
  const { symbol, fast } = req.body.arguments as { symbol?: string; fast?: boolean };
  if (symbol !== 'ACME') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"price":1}');
  setTimeout(() => res.writeHead(400).end('no such symbol'), fast ? 0 : ANSWER_MS);
};

/** The tool server of the last test (no budget policies); each store has its own. */
let tools: ToolServer;
let redis: TestRedis;
const STORES = ['memory', 'redis', 'slow memory'] as const;
type StoreName = (typeof STORES)[number];
/** Each store's run of each test (keyed `${store}: ${test}`), started in beforeAll. */
const runs = new Map<string, Promise<void>>();
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  tools = await startToolServer({ '/quote': quoteRoute });
  redis = await startRedis({ own: true });
  const sides = await Promise.all(STORES.map(startStore));
  for (const side of sides) {
    let previous: Promise<unknown> = Promise.resolve();
    for (const [name, body] of TESTS) {
      const run = previous.then(() => body(side));
      run.catch(() => undefined);
      runs.set(`${side.store}: ${name}`, run);
      previous = run.catch(() => undefined);
    }
  }
});
afterAll(async () => {
  await Promise.allSettled(runs.values());
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  await tools?.close();
  await redis?.close();
});

const yaml = (url = tools.url) => `
tools:
  - name: quote
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 1 }
    primary_parameter: /symbol
    input_schema: '{"type":"object"}'
    http: { url: "${url}/quote" }
    loop: { failure_warn_threshold: 2, failure_block_threshold: 3, block_cooldown_ms: ${COOLDOWN_MS} }
  - name: price
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 1 }
    primary_parameter: /symbol
    input_schema: '{"type":"object"}'
    http: { url: "${url}/quote" }
    loop: { failure_warn_threshold: 2, failure_block_threshold: 3, block_cooldown_ms: ${COOLDOWN_MS} }
policies:
  - match: "quote"
    budget: { max_calls_per_session: 6 }
  - match: ["quote", "price"]
    when: [{ pointer: /ask, op: exists }]
    decide: ask
    reason: needs ok
`;

type App = Awaited<ReturnType<typeof startApp>>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const asked = (events: SeenEvent[], session: string) => events.filter((e) => e.kind === 'APPROVAL_REQUESTED' && e.toolCallId?.startsWith(session)).map((e) => e.detail);
const kindOf = (r: { error?: { kind: ErrorKind } }) => (r.error ? ErrorKind[r.error.kind] : 'ok');
const BUDGET = '6 calls of "quote" (policies budget:)';

/** One store's app (with its own tool server), and its calls. */
async function startStore(store: StoreName) {
  const tools = await startToolServer({ '/quote': quoteRoute });
  closers.push(() => tools.close());
  const recording = recordingObserver();
  const events = recording.events;
  // The slow one answers its finish steps (a probe given back among them) 300 ms late.
  const real = createMemoryStore();
  const slow: Store = { ...real, finishAttempt: (step) => sleep(300).then(() => real.finishAttempt(step)) };
  const factories = PLUGINS.map((f) =>
    f === observabilityPlugin ? async () => ({ name: 'recorder', observer: recording.observer }) : store === 'slow memory' && f === storePlugin ? async () => ({ name: 'store', store: slow }) : f,
  );
  const d: App = await startApp(yaml(tools.url), store === 'redis' ? { redisUrl: redis.url } : {}, factories);
  closers.push(() => d.close());

  let turns = 0;
  /** One call of `session`; `ask`: the rule puts it to an approver, who approves whatever is asked while it runs. */
  async function call(session: string, symbol: string, ask = false, name = 'quote', fast = false) {
    const id = `${session}-c${++turns}`;
    const args = { symbol, ...(ask ? { ask: true } : {}), ...(fast ? { fast: true } : {}) };
    let done = false;
    const turn = d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name, arguments: JSON.stringify(args) }] }).finally(() => (done = true));
    const approved = new Set<string>();
    for (let i = 0; i < 500 && !done; i++) {
      for (const approvalId of asked(events, id)) if (!approved.has(approvalId) && approved.add(approvalId)) await d.dispatch.resolveApproval({ approvalId, approve: true });
      await sleep(10);
    }
    return (await turn).results[0]!;
  }
  /** Blocks ACME's op: three fast failures in a row (three counts of the budget). */
  async function block(session: string) {
    for (let n = 0; n < 3; n++) expect(kindOf(await call(session, 'ACME', false, 'quote', true))).toBe('TOOL_ERROR');
  }
  return { store, d, events, tools, call, block };
}
type Side = Awaited<ReturnType<typeof startStore>>;

/** The tests each store runs, in this order. */
const TESTS: [string, (side: Side) => Promise<void>][] = [
  ['a call refused for the probe another call holds is refused unasked, and not counted', async ({ store, events, tools, call, block }) => {
    const session = `${store}-held`;
    await block(session);
    await sleep(COOLDOWN_MS + 100);
    const before = tools.count('/quote');
    // The probe (the 4th count) runs for ANSWER_MS.
    const probe = call(session, 'ACME');
    await sleep(100);
    const refused = await call(session, 'ACME', true);
    expect(kindOf(refused)).toBe('LOOP_BLOCKED');
    expect(refused.error!.message).toMatch(/another call of it is running once more now/);
    expect(asked(events, session)).toEqual([]);
    expect(kindOf(await probe)).toBe('TOOL_ERROR');
    expect(tools.count('/quote') - before).toBe(1);
    // The 5th count: one call left. Before, the refused call had been the 5th, and this was the last.
    const next = await call(session, 'OTHER');
    expect(kindOf(next)).toBe('ok');
    expect(next.warnings).toContain(`this session has 1 call left of its budget of ${BUDGET}`);
  }],

  ["a tool with no session budget: a call within its block's cool-down is refused unasked too", async ({ store, events, call }) => {
    const session = `${store}-unbudgeted`;
    for (let n = 0; n < 3; n++) expect(kindOf(await call(session, 'ACME', false, 'price', true))).toBe('TOOL_ERROR');
    const refused = await call(session, 'ACME', true, 'price');
    expect(kindOf(refused)).toBe('LOOP_BLOCKED');
    expect(refused.error!.message).toMatch(/dispatch refuses to run it again for/);
    expect(asked(events, session)).toEqual([]);
    // Past the cool-down it is asked about, and runs once approved.
    await sleep(COOLDOWN_MS + 100);
    expect(kindOf(await call(session, 'ACME', true, 'price'))).toBe('TOOL_ERROR');
    expect(asked(events, session)).toHaveLength(1);
  }],

  ["a call within the block's cool-down is refused unasked", async ({ store, events, call, block }) => {
    const session = `${store}-cooling`;
    await block(session);
    const refused = await call(session, 'ACME', true);
    expect(kindOf(refused)).toBe('LOOP_BLOCKED');
    expect(refused.error!.message).toMatch(/dispatch refuses to run it again for/);
    expect(asked(events, session)).toEqual([]);
  }],

  ['a call waiting for its approver holds no probe: a call of the op arriving meanwhile runs as the probe', async ({ store, d, events, tools, call, block }) => {
    const session = `${store}-waiting`;
    await block(session);
    await sleep(COOLDOWN_MS + 100);
    const before = tools.count('/quote');
    const id = `${session}-asked`;
    const waiting = d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name: 'quote', arguments: '{"symbol":"ACME","ask":true}' }] });
    // Meanwhile (with the slow store, while a probe taken before asking would still be held): not
    // refused "another call of it is running once more now", as nothing runs.
    await sleep(100);
    expect(kindOf(await call(session, 'ACME'))).toBe('TOOL_ERROR');
    expect(tools.count('/quote') - before).toBe(1);
    for (let i = 0; i < 200 && asked(events, id).length === 0; i++) await sleep(10);
    expect(asked(events, id)).toHaveLength(1);
    await d.dispatch.resolveApproval({ approvalId: asked(events, id)[0]!, approve: false });
    expect(kindOf((await waiting).results[0]!)).toBe('BLOCKED');
  }],

  ['a call approved while another call runs as the probe is refused for it, and its count given back', async ({ store, d, events, tools, call, block }) => {
    const session = `${store}-approved-held`;
    await block(session);
    await sleep(COOLDOWN_MS + 100);
    const before = tools.count('/quote');
    const id = `${session}-asked`;
    // The 4th count, taken before its approver is asked.
    const waiting = d.dispatch.dispatch({ sessionId: session, interactive: true, calls: [{ id, name: 'quote', arguments: '{"symbol":"ACME","ask":true}' }] });
    for (let i = 0; i < 200 && asked(events, id).length === 0; i++) await sleep(10);
    expect(asked(events, id)).toHaveLength(1);
    // The probe (the 5th count) runs for ANSWER_MS; the asked call is approved meanwhile.
    const probe = call(session, 'ACME');
    await sleep(150);
    await d.dispatch.resolveApproval({ approvalId: asked(events, id)[0]!, approve: true });
    const refused = (await waiting).results[0]!;
    expect(kindOf(refused)).toBe('LOOP_BLOCKED');
    expect(refused.error!.message).toMatch(/another call of it is running once more now/);
    expect(kindOf(await probe)).toBe('TOOL_ERROR');
    expect(tools.count('/quote') - before).toBe(1);
    // Given back: this is the 5th count, one call left. Before, the refused call stayed the 4th.
    const next = await call(session, 'OTHER');
    expect(kindOf(next)).toBe('ok');
    expect(next.warnings).toContain(`this session has 1 call left of its budget of ${BUDGET}`);
  }],

  ['after the cool-down, the call asked about runs as the probe once approved: the step before asking took no probe', async ({ store, events, tools, call, block }) => {
    const session = `${store}-probe`;
    await block(session);
    await sleep(COOLDOWN_MS + 100);
    const before = tools.count('/quote');
    const probe = await call(session, 'ACME', true);
    expect(asked(events, session)).toHaveLength(1);
    expect(kindOf(probe)).toBe('TOOL_ERROR');
    expect(tools.count('/quote') - before).toBe(1);
  }],
];

describe.each(STORES.map((store) => [store]))('%s store', (store) => {
  for (const [name] of TESTS) {
    test(name, async () => {
      const run = runs.get(`${store}: ${name}`);
      if (!run) throw new Error(`the ${store} store's run of this test was not started`);
      await run;
    });
  }
});

test('with no budget policies at all, a call within its block\'s cool-down is refused unasked', async () => {
  const recording = recordingObserver();
  const factories = PLUGINS.map((f) => (f === observabilityPlugin ? async () => ({ name: 'recorder', observer: recording.observer }) : f));
  const unbudgeted = yaml().replace(/ {2}- match: "quote"\n {4}budget: \{ max_calls_per_session: 6 \}\n/, '');
  expect(unbudgeted).not.toContain('budget:');
  const d = await startApp(unbudgeted, {}, factories);
  try {
    const send = (id: string, args: object) => d.dispatch.dispatch({ sessionId: 'no-budgets', interactive: true, calls: [{ id, name: 'price', arguments: JSON.stringify(args) }] });
    for (let n = 0; n < 3; n++) expect(kindOf((await send(`nb-${n}`, { symbol: 'ACME', fast: true })).results[0]!)).toBe('TOOL_ERROR');
    const refused = (await send('nb-asked', { symbol: 'ACME', ask: true })).results[0]!;
    expect(kindOf(refused)).toBe('LOOP_BLOCKED');
    expect(asked(recording.events, 'nb-')).toEqual([]);
  } finally {
    await d.close();
  }
});
