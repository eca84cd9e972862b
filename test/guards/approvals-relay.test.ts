import { APPROVALS_CHANNEL, createApprovals, createApprovalsRelay, type ApprovalsRelay } from '../../src/guards';
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

/** Subscribers of the decisions channel, and reply channels, on the server now. */
function subscriptions(): { decisions: number; replies: number } {
  const decisions = Number(redis.cli('pubsub', 'numsub', APPROVALS_CHANNEL).trim().split('\n')[1]);
  const replies = redis.cli('pubsub', 'channels', `${APPROVALS_CHANNEL}:reply:*`).trim().split('\n').filter((line) => line !== '').length;
  return { decisions, replies };
}

/** A replica's relay, once it is subscribed (a confirmation sent before would be lost). */
async function replica() {
  const approvals = createApprovals({ timeoutMs: 20_000 });
  const relay = createApprovalsRelay({ approvals, connect: () => connectRedis(redis.url, { queueWhileDown: true }), logger: SILENT_LOGGER, replyTimeoutMs: 300 });
  relays.push(relay);
  await until(() => {
    const { decisions, replies } = subscriptions();
    return decisions >= relays.length && replies >= relays.length ? true : undefined;
  }, 'the relay subscribed', 5_000);
  return { approvals, relay };
}

test('a decision for an approval waiting on another replica is applied there', async () => {
  const a = await replica();
  const b = await replica();
  const decided = a.approvals.wait('ap-1', new AbortController().signal, 't');
  expect(await b.relay.resolve('ap-1', true, 't')).toBe(true);
  await expect(decided).resolves.toBe(true);
  expect(await b.relay.resolve('unknown', true, 't')).toBe(false);
});

test('with Redis frozen, ResolveApproval answers "not resolved" after replyTimeoutMs, and the decision held up in Redis is void when it arrives', async () => {
  const a = await replica();
  const b = await replica();
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
  const barrier = a.approvals.wait('barrier', new AbortController().signal, 't');
  expect(await b.relay.resolve('barrier', true, 't')).toBe(true);
  await expect(barrier).resolves.toBe(true);
  expect(a.approvals.pending()).toBe(1);
  controller.abort();
  await expect(decided).resolves.toBe(false);
});
