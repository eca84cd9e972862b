import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { buildApp } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolRoute, type ToolServer } from '../helpers/servers';

// DESIGN section 6, answers to call again later: (1) the wait taken for one that told none (a 429
// without Retry-After) is the tool's loop.assumed_wait_ms (it was a constant 1 s); (2) only the
// model's calls add to the run of such answers that makes a model waiting as told count after
// stop_threshold of them: retries within one call (the retry policy retrying a 429) each added
// one, so a call with 3 attempts counted as 3 calls. Real HTTP tools answering 429, both stores.
//
// Each test runs on both stores at once (most of its time is waiting as told): each store's app
// calls tools of its own (under /memory or /redis), so that neither counts the other's calls.

jest.setTimeout(60_000);

const STORES = ['memory', 'redis'] as const;
type Store = (typeof STORES)[number];

let tools: ToolServer;
let redis: TestRedis;

/** Answers 429, with `retryAfter` unless null. */
const busy =
  (retryAfter: string | null): ToolRoute =>
  (_req, res) =>
    void res.writeHead(429, retryAfter === null ? {} : { 'retry-after': retryAfter }).end('too many requests');

beforeAll(async () => {
  tools = await startToolServer(Object.fromEntries(STORES.flatMap((store) => [[`/${store}/unsaid`, busy(null)], [`/${store}/retried`, busy('0.2')]])));
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  await tools?.close();
  await redis?.close();
});

const yaml = (store: Store) => `
tools:
  - name: unsaid
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/${store}/unsaid" }
    loop: { assumed_wait_ms: 200 }
  - name: retried
    effect: read_only
    skip_memoize: true
    retry: { max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 1000 }
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/${store}/retried" }
    loop: { warn_threshold: 2, stop_threshold: 3, failure_warn_threshold: 2, failure_block_threshold: 3 }
`;

type App = Awaited<ReturnType<typeof startApp>>;
const callOn = async (d: App, session: string, name: string, n: number) =>
  (await d.dispatch.dispatch({ sessionId: session, turn: n, calls: [{ id: `c${n}`, name, arguments: '{"symbol":"ACME"}' }] })).results[0]!;
type Result = Awaited<ReturnType<typeof callOn>>;
const kindOf = (r: Result) => (r.error ? ErrorKind[r.error.kind] : 'ok');
const loopWarnings = (r: Result) => r.warnings.filter((w) => w.startsWith('loop warning')).length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `body` on both stores at once; a failure names its store. */
async function onBothStores(body: (store: Store, d: App) => Promise<void>): Promise<void> {
  const outcomes = await Promise.allSettled(STORES.map((store) => body(store, apps[store]!)));
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

const apps: Partial<Record<Store, App>> = {};
describe('memory and redis stores, at once', () => {
  beforeEach(async () => {
    await Promise.all(STORES.map(async (store) => (apps[store] = await startApp(yaml(store), store === 'redis' ? { redisUrl: redis.url } : {}))));
  });
  afterEach(async () => {
    await Promise.all(
      STORES.map(async (store) => {
        await apps[store]?.close();
        apps[store] = undefined;
      }),
    );
  });

  test('a 429 saying no wait tells loop.assumed_wait_ms; a model waiting that long is neither warned of nor blocked', () =>
    onBothStores(async (store, d) => {
      const session = `${store}-assumed-${Date.now()}`;
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) {
        results.push(await callOn(d, session, 'unsaid', n));
        await sleep(260);
      }
      expect(results.map((r) => [kindOf(r), r.error!.retryAfterMs, JSON.parse(r.output).retry_after_ms])).toEqual(Array(7).fill(['TOOL_ERROR', 200, 200]));
      expect(results.map(loopWarnings)).toEqual(Array(7).fill(0));
    }));

  test("retries within one call add one to the run of answers to call again later, as the model's call: a model waiting as told is counted after stop_threshold calls, not attempts", () =>
    onBothStores(async (store, d) => {
      const session = `${store}-retried-${Date.now()}`;
      const before = tools.count(`/${store}/retried`);
      const results: Result[] = [];
      for (let n = 1; n <= 7; n++) {
        results.push(await callOn(d, session, 'retried', n));
        await sleep(260);
      }
      // stop_threshold 3: the 4th call on counts; warned at the 2nd counted, blocked after the 3rd.
      expect(results.map((r) => `${kindOf(r)} ${r.attempts}`)).toEqual([...Array(6).fill('TOOL_ERROR 3'), 'LOOP_BLOCKED 1']);
      expect(results.map(loopWarnings)).toEqual([0, 0, 0, 0, 1, 1, 0]);
      expect(results[6]!.error!.message).toMatch(/^this exact call failed the same way 6 times in a row/);
      expect(tools.count(`/${store}/retried`) - before).toBe(18);
    }));
});

describe('loop.assumed_wait_ms in the config', () => {
  async function refusal(yaml: string): Promise<string> {
    try {
      const app = await buildApp(parseConfig(yaml, 'c.yaml'), { logger: SILENT_LOGGER });
      await app.close();
    } catch (error) {
      return (error as Error).message;
    }
    return 'loaded';
  }
  const tool = (loop: string) => `tools:\n  - { name: a, effect: read_only, builtin: { name: echo }, loop: ${loop} }\n`;

  test.each([
    ['{ assumed_wait_ms: 3600000 }', 'loaded'],
    ['{ assumed_wait_ms: 0 }', 'loaded'],
    ['{ assumed_wait_ms: 3600001 }', 'c.yaml: tools[0]: tool "a": loop.assumed_wait_ms must be at most 3600000 (an hour), got 3600001'],
    ['{ assumed_wait_ms: -1 }', 'c.yaml: tools[0].loop.assumed_wait_ms: must be a non-negative integer, got -1'],
    ['{ assumed_wait: 500 }', 'c.yaml: tools[0].loop.assumed_wait: unknown key "assumed_wait" (did you mean assumed_wait_ms?)'],
  ])('%s: %s', async (loop, message) => {
    expect(await refusal(tool(loop))).toBe(message);
  });
});
