import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { observabilityPlugin } from '../../src/app/plugins/observability-plugin';
import { recordingObserver } from '../guards/helpers';
import { monitorRedis, startRedis, type TestRedis } from '../helpers/redis-server';
import { closedPort, startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';

// DESIGN section 6, over time: the same call failing the same way 2 times is warned of, 5 times
// refused LOOP_BLOCKED for a cool-down (loop.block_cooldown_ms, or the Retry-After told if later),
// after which it runs once more. A failure after which the model was told to call again later
// (a 429, a 503 with Retry-After, an unreachable tool) counts only when the call came before the
// wait it was told had passed: a model that waits is never warned nor blocked (it was, from the
// 2nd call, for the session's 24 h, once), one that hammers is stopped (it was never: a tool
// answering 429 forever was called forever). Real HTTP tools, both stores.
//
// Each test runs on both stores at once (most of its time is waiting as told): each store has its
// own app, tool server and the flags its routes read, so that neither sees the other's calls.

jest.setTimeout(60_000);

const STORES = ['memory', 'redis'] as const;
type Store = (typeof STORES)[number];

/** What a store's routes read: set by its test, reset before each test. */
interface ToolState {
  busy: boolean;
  broken: boolean;
  answers: number;
}
let redis: TestRedis;

/** Told waits, in seconds as Retry-After says them (dispatch takes decimals: 0.3 is 300 ms). */
const RETRY_AFTER = '0.3';
const RETRY_AFTER_MS = 300;
/** A model that waits as told waits this long (loop.assumed_wait_ms, 1 s by default, for a failure that said no wait). */
const waited = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms + 60));

/** The wait /quick tells, longer than the cool-down (COOLDOWN_MS) so that the block lasts until it ends. */
const QUICK_RETRY_AFTER_MS = 800;

/** While `state.busy`, answers `status` (with `retryAfter` unless null); then 200 with `{"price":42}`. */
const busyRouteOf =
  (state: ToolState, status: number, retryAfter: string | null = RETRY_AFTER): ToolRoute =>
  (_req, res) => {
    if (state.busy) res.writeHead(status, retryAfter === null ? {} : { 'retry-after': retryAfter }).end('too many requests');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"price":42}');
  };

const routes = (state: ToolState): Record<string, ToolRoute> => {
  const busyRoute = (status: number, retryAfter?: string | null) => busyRouteOf(state, status, retryAfter);
  return {
    '/quote': busyRoute(429),
    // Hammered: told waits long enough that calls at once are early however slow the machine.
    '/hq': busyRoute(429, '30'),
    '/hm': busyRoute(503, '30'),
    '/quick': busyRoute(429, String(QUICK_RETRY_AFTER_MS / 1000)),
    '/short': busyRoute(429),
    '/patient': busyRoute(429),
    // Bodies that differ (a request id), and a 429 alternating with a 503: one answer to call again later.
    '/varying': (_req, res) => void res.writeHead(429, { 'retry-after': '30' }).end(`{"error":"rate limited","request_id":"${++state.answers}"}`),
    '/alt': (_req, res) => void (state.answers++ % 2 ? res.writeHead(503, { 'retry-after': '30' }).end('maintenance') : res.writeHead(429, { 'retry-after': '30' }).end('slow down')),
    // Long enough that the next call at once comes before the last attempt's told wait has passed.
    '/retried': busyRoute(429, '0.4'),
    '/post': busyRoute(429),
    '/maint': busyRoute(503),
    '/unsaid': busyRoute(429, null),
    '/bad': (_req, res) => void (state.broken ? res.writeHead(400).end('no such symbol') : res.writeHead(200).end('{"price":42}')),
    // 429 while `busy`, else 400.
    '/flip': (_req, res) => void (state.busy ? res.writeHead(429, { 'retry-after': RETRY_AFTER }).end('too many requests') : res.writeHead(400).end('no such symbol')),
  };
};

const states: Record<Store, ToolState> = { memory: { busy: true, broken: true, answers: 0 }, redis: { busy: true, broken: true, answers: 0 } };
const toolServers: Partial<Record<Store, ToolServer>> = {};
beforeAll(async () => {
  for (const store of STORES) toolServers[store] = await startToolServer(routes(states[store]));
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  for (const store of STORES) await toolServers[store]?.close();
  await redis?.close();
});
beforeEach(() => {
  for (const state of Object.values(states)) Object.assign(state, { busy: true, broken: true });
});

const tool = (name: string, effect: string, url: string, extra = '') => `
  - name: ${name}
    effect: ${effect}${effect === 'read_only' ? '\n    skip_memoize: true' : ''}
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}" }${extra}`;

/**
 * A failure that told no wait is taken to have told loop.assumed_wait_ms (1 s by default: the
 * tests of that default hammer unsaid and down). unsaid_brief and down_brief, the same tools
 * assuming 300 ms, are waited out in (a): the same wait as told, six times in a row, at a third of the time.
 */
const ASSUMED_WAIT_MS = 300;
const briefAssumedWait = `\n    loop: { assumed_wait_ms: ${ASSUMED_WAIT_MS} }`;

/** A short cool-down, so that a test sees a block end. */
const COOLDOWN_MS = 400;
const cooldown = `\n    loop: { block_cooldown_ms: ${COOLDOWN_MS} }`;

async function start(store: Store) {
  const tools = toolServers[store]!;
  const down = `http://127.0.0.1:${await closedPort()}/down`;
  const yaml = `
policies:
  - { match: [down, down_brief, maint, hm, alt, varying, short, patient], breaker: { consecutive_failures: 100 } }
tools:${tool('quote', 'read_only', `${tools.url}/quote`)}${tool('hq', 'read_only', `${tools.url}/hq`)}${tool('hm', 'read_only', `${tools.url}/hm`)}${tool('quick', 'read_only', `${tools.url}/quick`, cooldown)}${tool('post', 'side_effect', `${tools.url}/post`)}${tool('maint', 'read_only', `${tools.url}/maint`)}${tool('unsaid', 'read_only', `${tools.url}/unsaid`)}${tool('bad', 'read_only', `${tools.url}/bad`, cooldown)}${tool('flip', 'read_only', `${tools.url}/flip`)}${tool('varying', 'read_only', `${tools.url}/varying`)}${tool('alt', 'read_only', `${tools.url}/alt`)}${tool('short', 'read_only', `${tools.url}/short`, '\n    loop: { block_cooldown_ms: 1000 }')}${tool('patient', 'read_only', `${tools.url}/patient`, '\n    loop: { warn_threshold: 2, stop_threshold: 3, failure_block_threshold: 3 }')}${tool('down', 'read_only', down)}${tool('unsaid_brief', 'read_only', `${tools.url}/unsaid`, briefAssumedWait)}${tool('down_brief', 'read_only', down, briefAssumedWait)}
  - name: retried
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 1000 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/retried" }
`;
  const { observer, events } = recordingObserver();
  const factories = PLUGINS.map((factory) => {
    if (factory === observabilityPlugin) return async () => ({ name: 'recording-observer', observer });
    if (factory === guardsPlugin) return createGuardsPlugin();
    return factory;
  });
  const app = await startApp(yaml, store === 'redis' ? { redisUrl: redis.url } : {}, factories);
  return { ...app, events };
}

type App = Awaited<ReturnType<typeof start>>;
const callOn = async (d: App, session: string, name: string, n: number) =>
  (await d.dispatch.dispatch({ sessionId: session, turn: n, calls: [{ id: `c${n}`, name, arguments: '{"symbol":"ACME"}' }] })).results[0]!;
const loopWarnings = (warnings: readonly string[]) => warnings.filter((w) => w.startsWith('loop warning'));
type Result = Awaited<ReturnType<typeof callOn>>;
const kindOf = (r: Result) => (r.error ? ErrorKind[r.error.kind] : 'ok');

/** One store's side of a test: its app, and the tool server and flags its tools answer from. */
interface Side {
  readonly store: Store;
  readonly d: App;
  readonly tools: ToolServer;
  readonly state: ToolState;
}
const apps: Partial<Record<Store, App>> = {};
const side = (store: Store): Side => ({ store, d: apps[store]!, tools: toolServers[store]!, state: states[store] });

/** Runs `body` on both stores at once; a failure names its store. */
async function onBothStores(body: (side: Side) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(STORES.map((store) => body(side(store))));
  const failures = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [{ store: STORES[i]!, reason: o.reason as unknown }] : []));
  if (failures.length === 0) return;
  const named = failures.map(({ store, reason }) => `${store} store: ${reason instanceof Error ? reason.message : String(reason)}`);
  const first = failures[0]!.reason;
  if (first instanceof Error) {
    first.message = named.join('\n\n');
    throw first;
  }
  throw new Error(named.join('\n\n'));
}

describe('memory and redis stores, at once', () => {
  beforeEach(async () => {
    await Promise.all(STORES.map(async (store) => (apps[store] = await start(store))));
  });
  afterEach(async () => {
    await Promise.all(
      STORES.map(async (store) => {
        await apps[store]?.close();
        apps[store] = undefined;
      }),
    );
  });

  test('(a) a model that waits as told is neither warned of nor blocked, and runs once the tool is back', () =>
    onBothStores(async ({ store, d, tools, state }) => {
      const cases = [
        ['quote', '/quote', RETRY_AFTER_MS],
        ['post', '/post', RETRY_AFTER_MS],
        ['maint', '/maint', RETRY_AFTER_MS],
        ['unsaid_brief', '/unsaid', ASSUMED_WAIT_MS],
        ['down_brief', undefined, ASSUMED_WAIT_MS],
      ] as const;
      const before = cases.map(([, path]) => (path ? tools.count(path) : 0));
      const seen = await Promise.all(
        cases.map(async ([name, , waitMs]) => {
          const session = `${store}-obedient-${name}`;
          const kinds: string[] = [];
          for (let n = 1; n <= 6; n++) {
            const r = await callOn(d, session, name, n);
            kinds.push(`${kindOf(r)}${loopWarnings(r.warnings).length > 0 ? ' warned' : ''}`);
            await waited(waitMs);
          }
          return kinds;
        }),
      );
      expect(seen).toEqual([...Array(4).fill(Array(6).fill('TOOL_ERROR')), Array(6).fill('UNAVAILABLE')]);
      state.busy = false;
      for (const [i, [name, path]] of cases.entries()) {
        if (!path) continue;
        expect(await callOn(d, `${store}-obedient-${name}`, name, 7)).toMatchObject({ isError: false, output: '{"price":42}' });
        expect(tools.count(path) - before[i]!).toBe(7);
      }
      expect(d.events.filter((e) => e.kind === 'LOOP_WARNING')).toEqual([]);
    }));

  test.each([
    ['hq', 'HTTP 429, Retry-After', 'TOOL_ERROR'],
    ['hm', 'HTTP 503, Retry-After', 'TOOL_ERROR'],
    ['unsaid', 'HTTP 429 saying no wait', 'TOOL_ERROR'],
    ['down', 'unreachable', 'UNAVAILABLE'],
  ])('(b) %s (%s) called again at once: warned from the 3rd call, refused LOOP_BLOCKED at the 7th without running', (name, _what, kind) =>
    onBothStores(async ({ store, d, tools }) => {
      const results: Result[] = [];
      const before = tools.count(`/${name}`);
      for (let n = 1; n <= 7; n++) results.push(await callOn(d, `${store}-hammer-${name}`, name, n));
      // The 1st came before any wait was told: it does not count; the 2nd to 6th were early.
      expect(results.map(kindOf)).toEqual([kind, kind, kind, kind, kind, kind, 'LOOP_BLOCKED']);
      expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 0]);
      if (name !== 'down') expect(tools.count(`/${name}`) - before).toBe(6);
      // The default cool-down is 30 s (and so is the wait hq and hm tell): about that is left.
      expect(results[6]!.error?.retryAfterMs).toBeGreaterThan(29_000);
      expect(results[6]!.error?.retryAfterMs).toBeLessThanOrEqual(30_000);
    }),
  );

  test("(b) a hammered tool whose retries wait its Retry-After within the call is still counted: the call's last told wait is the one compared", () =>
    onBothStores(async ({ store, d, tools }) => {
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) results.push(await callOn(d, `${store}-retried`, 'retried', n));
      expect(results.map((r) => `${kindOf(r)} ${r.attempts}`)).toEqual([...Array(6).fill('TOOL_ERROR 2'), 'LOOP_BLOCKED 1']);
      expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 0]);
      expect(tools.count('/retried')).toBeGreaterThanOrEqual(12);
    }));

  test('(c) a block ends after its cool-down: the call runs once more, the same failure blocks it again, a success clears it', () =>
    onBothStores(async ({ store, d, tools, state }) => {
      const session = `${store}-cooldown`;
      const before = tools.count('/quick');
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) results.push(await callOn(d, session, 'quick', n));
      expect(results.map(kindOf)).toEqual([...Array(6).fill('TOOL_ERROR'), 'LOOP_BLOCKED']);
      // The wait the tool told (800 ms) is longer than the cool-down: the block lasts until it ends.
      const left = results[6]!.error!.retryAfterMs;
      expect(left).toBeGreaterThan(COOLDOWN_MS);
      expect(left).toBeLessThanOrEqual(QUICK_RETRY_AFTER_MS);
      await waited(left);
      // A probe: it runs, fails the same way (warned), and the next call at once is refused again.
      const probe = await callOn(d, session, 'quick', 8);
      expect([kindOf(probe), loopWarnings(probe.warnings).length]).toEqual(['TOOL_ERROR', 1]);
      expect(kindOf(await callOn(d, session, 'quick', 9))).toBe('LOOP_BLOCKED');
      expect(tools.count('/quick') - before).toBe(7);
      state.busy = false;
      await waited(QUICK_RETRY_AFTER_MS);
      const back = await callOn(d, session, 'quick', 10);
      expect(back).toMatchObject({ isError: false, output: '{"price":42}', warnings: [] });
      expect(await callOn(d, session, 'quick', 11)).toMatchObject({ isError: false, warnings: [] });
      expect(tools.count('/quick') - before).toBe(9);
    }));

  test("(c) the tool's own error repeated: warned at the 2nd, refused at the 6th, run again after the cool-down once the tool is fixed", () =>
    onBothStores(async ({ store, d, tools, state }) => {
      const session = `${store}-bad`;
      const before = tools.count('/bad');
      const results: Result[] = [];
      for (let n = 1; n <= 6; n++) results.push(await callOn(d, session, 'bad', n));
      expect(results.map(kindOf)).toEqual(['TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'TOOL_ERROR', 'LOOP_BLOCKED']);
      expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 1, 1, 1, 1, 0]);
      expect(tools.count('/bad') - before).toBe(5);
      state.broken = false;
      await waited(results[5]!.error!.retryAfterMs);
      expect(await callOn(d, session, 'bad', 7)).toMatchObject({ isError: false, output: '{"price":42}', warnings: [] });
      expect(tools.count('/bad') - before).toBe(6);
    }));

  test('calls sent together in one turn are not early against each other: 8 identical calls to a tool answering 429 (Retry-After 30) all run, unwarned', () =>
    onBothStores(async ({ store, d, tools }) => {
      const before = tools.count('/hq');
      const calls = Array.from({ length: 8 }, (_, i) => ({ id: `t${i}`, name: 'hq', arguments: '{"symbol":"ACME"}' }));
      const { results } = await d.dispatch.dispatch({ sessionId: `${store}-one-turn`, turn: 1, calls });
      expect(results.map(kindOf)).toEqual(Array(8).fill('TOOL_ERROR'));
      expect(results.flatMap((r) => loopWarnings(r.warnings))).toEqual([]);
      expect(tools.count('/hq') - before).toBe(8);
      // The next turns, at once, did not wait what the last one was told: they are early, and count.
      expect(loopWarnings((await callOn(d, `${store}-one-turn`, 'hq', 2)).warnings)).toEqual([]);
      expect(loopWarnings((await callOn(d, `${store}-one-turn`, 'hq', 3)).warnings)).toEqual(['loop warning: this call has failed the same way 10 times in a row; change the arguments or the approach']);
    }));

  test.each([
    ['varying', 'HTTP 429 whose body differs (a request id)'],
    ['alt', 'HTTP 429 and 503 (Retry-After) alternating'],
  ])('(b) %s (%s) called again at once is one streak: refused LOOP_BLOCKED at the 7th', (name) =>
    onBothStores(async ({ store, d }) => {
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) results.push(await callOn(d, `${store}-vary-${name}`, name, n));
      expect(results.map(kindOf)).toEqual([...Array(6).fill('TOOL_ERROR'), 'LOOP_BLOCKED']);
      expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 1, 1, 1, 1, 0]);
      // The tool answered 6 times, the 1st uncounted: the count told is the tool's.
      expect(results[6]!.error!.message).toMatch(/^this exact call failed the same way 6 times in a row; dispatch refuses to run it again for (29|30) s, then runs it once more$/);
    }),
  );

  test('a 429 saying no wait tells the wait dispatch takes (retry_after_ms 1000); a model waiting as told forever is counted after stop_threshold answers, and blocked', () =>
    onBothStores(async ({ store, d }) => {
      const first = await callOn(d, `${store}-told`, 'unsaid', 1);
      expect([kindOf(first), first.error!.retryAfterMs, JSON.parse(first.output).retry_after_ms]).toEqual(['TOOL_ERROR', 1000, 1000]);
      // patient: stop_threshold 3, failure_warn_threshold 2, failure_block_threshold 3, told 300 ms.
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) {
        results.push(await callOn(d, `${store}-patient`, 'patient', n));
        await waited(RETRY_AFTER_MS);
      }
      expect(results.map(kindOf)).toEqual([...Array(6).fill('TOOL_ERROR'), 'LOOP_BLOCKED']);
      expect(results.map((r) => loopWarnings(r.warnings).length)).toEqual([0, 0, 0, 0, 1, 1, 0]);
      expect(results[6]!.error!.message).toMatch(/^this exact call failed the same way 6 times in a row/);
    }));

  test('a failure that blocks the next call for longer than the tool asked tells the block (retry_after_ms and a warning); the probe after it too', () =>
    onBothStores(async ({ store, d }) => {
      // short: told 300 ms, cool-down 1 s.
      const session = `${store}-short`;
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) results.push(await callOn(d, session, 'short', n));
      expect(results.map(kindOf)).toEqual([...Array(6).fill('TOOL_ERROR'), 'LOOP_BLOCKED']);
      expect(results.slice(0, 5).map((r) => r.error!.retryAfterMs)).toEqual(Array(5).fill(RETRY_AFTER_MS));
      const sixth = results[5]!;
      expect([sixth.error!.retryAfterMs > 900, sixth.error!.retryAfterMs <= 1000, JSON.parse(sixth.output).retry_after_ms]).toEqual([true, true, sixth.error!.retryAfterMs]);
      expect(loopWarnings(sixth.warnings)).toEqual(['loop warning: this call has failed the same way 6 times in a row; dispatch refuses to run it again unchanged for 1 s, longer than the tool asked (retry_after_ms); change the arguments or the approach']);
      // Waiting what it was told reaches the probe, not another refusal; the probe failing tells the new block.
      await waited(sixth.error!.retryAfterMs);
      const probe = await callOn(d, session, 'short', 8);
      expect([kindOf(probe), probe.error!.retryAfterMs > 900]).toEqual(['TOOL_ERROR', true]);
      expect(loopWarnings(probe.warnings)[0]).toContain('failed the same way 7 times in a row; dispatch refuses to run it again unchanged for 1 s');
    }));

  test('answers to call again later, waited out, between the same real failures neither add to their streak nor break it', () =>
    onBothStores(async ({ store, d, state }) => {
      const session = `${store}-flip`;
      const kinds: string[] = [];
      const warned: number[] = [];
      for (let n = 1; n <= 6; n++) {
        state.busy = n >= 2 && n <= 4;
        const r = await callOn(d, session, 'flip', n);
        kinds.push(`${ErrorKind[r.error!.kind]} ${r.error!.recoverable}`);
        warned.push(loopWarnings(r.warnings).length);
        await waited(RETRY_AFTER_MS);
      }
      expect(kinds).toEqual(['TOOL_ERROR false', 'TOOL_ERROR true', 'TOOL_ERROR true', 'TOOL_ERROR true', 'TOOL_ERROR false', 'TOOL_ERROR false']);
      expect(warned).toEqual([0, 0, 0, 0, 1, 1]);
    }));

  test('redis store: a call told to call again later still takes its two store steps with Redis, no more (DESIGN section 3, step 8)', async () => {
    const d = apps.redis!;
    await callOn(d, 'redis-steps', 'post', 1);
    const monitor = await monitorRedis(redis.port);
    try {
      const r = await callOn(d, 'redis-steps', 'post', 2);
      expect(r.error?.retryAfterMs).toBe(RETRY_AFTER_MS);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The app here has no shared stats (its observer is the recording one): nothing else runs scripts.
      expect(monitor.commands().filter((c) => c.startsWith('eval'))).toEqual(['evalsha', 'evalsha']);
    } finally {
      monitor.stop();
    }
  });
});
