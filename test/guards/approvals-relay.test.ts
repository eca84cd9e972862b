import { createApprovals, createApprovalsRelay, type ApprovalsRelay } from '../../src/guards';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// Decisions forwarded between two replicas' relays through a real redis-server that the test
// freezes (SIGSTOP): the RPC must not wait on Redis, and a decision held up past the time its
// asker waited must not be applied when it finally arrives.

let redis: TestRedis;
const relays: ApprovalsRelay[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  for (const relay of relays) await relay.close();
  await redis.close();
});

function replica() {
  const approvals = createApprovals({ timeoutMs: 20_000 });
  const relay = createApprovalsRelay({ approvals, connect: () => connectRedis(redis.url, { queueWhileDown: true }), logger: SILENT_LOGGER, replyTimeoutMs: 300 });
  relays.push(relay);
  return { approvals, relay };
}

test('a decision for an approval waiting on another replica is applied there', async () => {
  const a = replica();
  const b = replica();
  const decided = a.approvals.wait('ap-1', new AbortController().signal, 't');
  // Both relays subscribed: retry until the forwarded decision is confirmed.
  await until(async () => ((await b.relay.resolve('ap-1', true, 't')) ? true : undefined), 'the decision confirmed', 5_000);
  await expect(decided).resolves.toBe(true);
});

test('with Redis frozen, ResolveApproval answers "not resolved" after replyTimeoutMs, and the decision held up in Redis is void when it arrives', async () => {
  const a = replica();
  const b = replica();
  // Both subscribed (as above), on an approval decided here, before Redis freezes.
  a.approvals.wait('warm-up', new AbortController().signal, 't').catch(() => undefined);
  await until(async () => ((await b.relay.resolve('warm-up', true, 't')) ? true : undefined), 'the relays ready', 5_000);
  const controller = new AbortController();
  const decided = a.approvals.wait('ap-2', controller.signal, 't');
  redis.signal('SIGSTOP');
  let answered: boolean | undefined;
  try {
    const started = Date.now();
    answered = await b.relay.resolve('ap-2', true, 't');
    expect(Date.now() - started).toBeLessThan(2_000);
  } finally {
    redis.signal('SIGCONT');
  }
  expect(answered).toBe(false);
  // The held decision reaches A now, past its expiry: A's approval is still waiting. A later
  // decision through the relay shows every earlier message was handled.
  a.approvals.wait('barrier', new AbortController().signal, 't').catch(() => undefined);
  await until(async () => ((await b.relay.resolve('barrier', true, 't')) ? true : undefined), 'a later decision confirmed', 5_000);
  expect(a.approvals.pending()).toBe(1);
  controller.abort();
  await expect(decided).resolves.toBe(false);
});
