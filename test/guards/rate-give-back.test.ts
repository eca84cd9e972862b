import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { closeReplicaPair, startReplicaPair, type Replica, type ReplicaPair } from './replica-pair';

// A turn given back (its call cancelled while it waited) is given back only while it is the last
// one queued. Moved back under a later turn still waiting, it let the next call take that later
// turn's time: two attempts started at the same instant, where docs/policies.md promises attempts
// one interval apart once the burst is spent. This replica's own limit, and a `shared: true` one
// across two replicas on a real Redis (give-turn.lua); a real HTTP tool records when each started.

jest.setTimeout(30_000);

const yaml = (shared: boolean) => (url: string) => `
tools:
  - name: paced
    effect: read_only
    concurrency_safe: true
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/paced" }
policies:
  - match: paced
    rate: { per_second: 1, burst: 1, wait_ms: 3000${shared ? ', shared: true' : ''} }
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let calls = 0;
const call = (app: Replica, signal?: AbortSignal): Promise<ToolResult | Error> => {
  calls++;
  return app.dispatch.dispatch({ sessionId: `s${calls}`, calls: [{ id: 'c', name: 'paced', arguments: `{"n":${calls}}` }] }, { signal }).then((r) => r.results[0]!, (e: Error) => e);
};

/**
 * 1 per second, burst 1: the first call starts at once, the second waits for the turn at ~1 s and
 * the third for the one at ~2 s; the second is cancelled, with the third still queued behind it.
 * A fourth call then queues behind the third (~3 s); it started with the third, at ~2 s.
 */
async function cancelledBeforeAnother(first: Replica, second: Replica, tools: ToolServer): Promise<number[]> {
  const controller = new AbortController();
  const one = call(first);
  await sleep(50);
  const two = call(second, controller.signal);
  await sleep(50);
  const three = call(first);
  await sleep(200);
  controller.abort();
  expect(await two).toBeInstanceOf(Error);
  await sleep(100);
  const four = call(second);
  const results = await Promise.all([one, three, four]);
  expect(results.map((r) => (r instanceof Error ? r.message : r.isError))).toEqual([false, false, false]);
  return tools.received.map((r) => r.start).sort((x, y) => x - y);
}

/** Starts one interval (1 s) apart, each a few ms early or late as its timer and request go. */
const expectOneIntervalApart = (starts: number[]) => {
  expect(starts).toHaveLength(3);
  for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(900);
};

test("this replica's own limit: a turn given back under a later one waiting stays spent", async () => {
  const tools = await startToolServer({ '/paced': json({ ok: true }) });
  const app = await startApp(yaml(false)(tools.url));
  try {
    expectOneIntervalApart(await cancelledBeforeAnother(app, app, tools));
  } finally {
    await app.close();
    await tools.close();
  }
});

describe('a shared limit (Redis)', () => {
  let pair: ReplicaPair;
  beforeAll(async () => {
    pair = await startReplicaPair(yaml(true), { '/paced': json({ ok: true }) });
  });
  afterAll(() => closeReplicaPair(pair ?? {}));

  test('a turn given back under a later one waiting, on another replica, stays spent', async () => {
    expectOneIntervalApart(await cancelledBeforeAnother(pair.a, pair.b, pair.tools));
  });

  test('the last turn queued is still given back: the next call takes its time', async () => {
    await sleep(1_200);
    pair.tools.received.splice(0);
    const controller = new AbortController();
    const one = call(pair.a);
    await sleep(50);
    const two = call(pair.b, controller.signal);
    await sleep(200);
    controller.abort();
    expect(await two).toBeInstanceOf(Error);
    await sleep(100);
    const three = call(pair.a);
    expect((await Promise.all([one, three])).map((r) => (r instanceof Error ? r.message : r.isError))).toEqual([false, false]);
    const starts = pair.tools.received.map((r) => r.start).sort((x, y) => x - y);
    // The second turn's time, ~1 s after the first (~2 s had the cancelled turn stayed spent).
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(900);
    expect(starts[1]! - starts[0]!).toBeLessThan(1_500);
  });
});
