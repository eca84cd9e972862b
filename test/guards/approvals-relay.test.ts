import { APPROVALS_CHANNEL, createApprovals, createApprovalsRelay, type Approvals, type ApprovalsRelay } from '../../src/guards';
import { DecisionUnknownError } from '../../src/guards/approvals-relay';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// Decisions forwarded between two replicas' relays through a real redis-server that the test
// freezes (SIGSTOP), or with the asker's subscription cut: the RPC must not wait on Redis, its
// answer must match what happened to the decision, and a decision held up past the time its
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

/**
 * A wait on `approvals` once its id is announced: with a relay, only when the wait is recorded in
 * Redis, where another replica's relay looks before it forwards a decision.
 */
async function announcedWait(approvals: Approvals, id: string, signal = new AbortController().signal): Promise<{ decided: Promise<boolean> }> {
  let announced!: () => void;
  const seen = new Promise<void>((resolve) => (announced = resolve));
  const decided = approvals.wait(id, signal, 't', () => announced());
  await seen;
  return { decided };
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
  const { decided } = await announcedWait(a.approvals, 'ap-1');
  expect(await b.relay.resolve('ap-1', true, 't')).toBe(true);
  await expect(decided).resolves.toBe(true);
  expect(await b.relay.resolve('unknown', true, 't')).toBe(false);
});

test('with Redis frozen, ResolveApproval cannot learn the outcome: it rejects (UNAVAILABLE at the RPC) instead of guessing, and the decision held up in Redis is not applied when it arrives', async () => {
  const a = await replica();
  const b = await replica();
  const controller = new AbortController();
  const { decided } = await announcedWait(a.approvals, 'ap-2', controller.signal);
  redis.signal('SIGSTOP');
  let outcome: unknown;
  try {
    const started = Date.now();
    outcome = await b.relay.resolve('ap-2', true, 't').catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(2_000);
  } finally {
    redis.signal('SIGCONT');
  }
  expect(outcome).toBeInstanceOf(DecisionUnknownError);
  // The held decision reaches A now, after B voided it: A's approval is still waiting. A later
  // decision through the relay shows every earlier message was handled.
  const { decided: barrier } = await announcedWait(a.approvals, 'barrier');
  expect(await b.relay.resolve('barrier', true, 't')).toBe(true);
  await expect(barrier).resolves.toBe(true);
  expect(a.approvals.pending()).toBe(1);
  controller.abort();
  await expect(decided).resolves.toBe(false);
});

test('a decision whose confirmation is lost (the asker\'s subscription deaf) is still answered as applied', async () => {
  const a = await replica();
  // B publishes directly; its subscriptions go through a proxy the test freezes.
  const proxy = await startTcpProxy(redis.port);
  try {
    let opened = 0;
    const connect = () => connectRedis(opened++ === 0 ? redis.url : `redis://127.0.0.1:${proxy.port}`, { queueWhileDown: true });
    const relay = createApprovalsRelay({ approvals: createApprovals(), connect, logger: SILENT_LOGGER, replyTimeoutMs: 300 });
    relays.push(relay);
    await until(() => (subscriptions().replies >= relays.length ? true : undefined), 'B subscribed', 5_000);
    proxy.freeze();
    const { decided } = await announcedWait(a.approvals, 'ap-3');
    expect(await relay.resolve('ap-3', true, 't')).toBe(true);
    await expect(decided).resolves.toBe(true);
    // Refused on A (it no longer waits): answered as not resolved, from the key as well.
    expect(await relay.resolve('ap-3', true, 't')).toBe(false);
  } finally {
    await proxy.close();
  }
});
