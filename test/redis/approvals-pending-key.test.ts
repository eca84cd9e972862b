import { randomUUID } from 'node:crypto';
import { APPROVALS_CHANNEL, createApprovals, createApprovalsRelay, type Approvals, type ApprovalsRelay } from '../../src/guards';
import { SILENT_LOGGER } from '../../src/log';
import { connectRedis } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// ResolveApproval may reach any replica, and any client may send any id: one that waits nowhere
// (unknown, stale, decided, timed out) or for another tenant must be answered "not resolved" at
// once, without holding the RPC for the relay's reply timeout and without writing to Redis. Each
// wait is recorded on a key of its id (its tenant, the approval timeout as TTL, deleted when it
// ends) before the id is announced, and the relay reads it first. Two replicas' relays on a real
// redis-server, with the relay's default reply timeout (2 s).

/** Far below the relay's default reply timeout (2,000 ms): one GET, not a wait for a confirmation. */
const AT_ONCE_MS = 500;
const APPROVAL_TIMEOUT_MS = 20_000;

let redis: TestRedis;
const relays: ApprovalsRelay[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterAll(async () => {
  for (const relay of relays) await relay.close();
  await redis.close();
});

/** Subscribers of the decisions channel and reply channels on the server now. */
function subscribed(): boolean | undefined {
  const decisions = Number(redis.cli('pubsub', 'numsub', APPROVALS_CHANNEL).trim().split('\n')[1]);
  const replies = redis.cli('pubsub', 'channels', `${APPROVALS_CHANNEL}:reply:*`).trim().split('\n').filter((line) => line !== '').length;
  return decisions >= relays.length && replies >= relays.length ? true : undefined;
}

async function replica(timeoutMs = APPROVAL_TIMEOUT_MS): Promise<{ approvals: Approvals; relay: ApprovalsRelay }> {
  const approvals = createApprovals({ timeoutMs });
  const relay = createApprovalsRelay({ approvals, connect: () => connectRedis(redis.url, { queueWhileDown: true }), logger: SILENT_LOGGER });
  relays.push(relay);
  await until(subscribed, 'the relay subscribed', 5_000);
  return { approvals, relay };
}

/** A wait on `approvals`, once its id is announced (as the pipeline announces it to the approver). */
async function announcedWait(approvals: Approvals, id: string, tenant: string, signal = new AbortController().signal): Promise<{ decided: Promise<boolean> }> {
  let announced!: () => void;
  const seen = new Promise<void>((resolve) => (announced = resolve));
  const decided = approvals.wait(id, signal, tenant, () => announced());
  await seen;
  return { decided };
}

const keys = (pattern: string) => redis.cli('--scan', '--pattern', pattern).trim().split('\n').filter((line) => line !== '');
const requestKeys = () => keys(`${APPROVALS_CHANNEL}:request:*`);
const pendingKeys = () => keys(`${APPROVALS_CHANNEL}:pending:*`);

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work;
  return { value, ms: Date.now() - started };
}

test('unknown ids, one or 200 at once, are not resolved at once and leave nothing in Redis', async () => {
  const b = await replica();
  const one = await timed(b.relay.resolve(randomUUID(), true, 't'));
  expect(one.value).toBe(false);
  expect(one.ms).toBeLessThan(AT_ONCE_MS);
  const many = await timed(Promise.all(Array.from({ length: 200 }, () => b.relay.resolve(randomUUID(), true, 't'))));
  expect(many.value.every((resolved) => !resolved)).toBe(true);
  expect(many.ms).toBeLessThan(AT_ONCE_MS * 2);
  expect(requestKeys()).toEqual([]);
});

test('an approval waiting on another replica: another tenant is refused at once, its own tenant decides it there, and a second decision is refused at once', async () => {
  const a = await replica();
  const b = await replica();
  const id = randomUUID();
  const { decided } = await announcedWait(a.approvals, id, 'ta');
  // Recorded with its tenant, living as long as the wait may.
  expect(redis.cli('get', `${APPROVALS_CHANNEL}:pending:{${id}}`).trim()).toBe('ta');
  const ttl = Number(redis.cli('pttl', `${APPROVALS_CHANNEL}:pending:{${id}}`).trim());
  expect(ttl).toBeGreaterThan(APPROVAL_TIMEOUT_MS - 5_000);
  expect(ttl).toBeLessThanOrEqual(APPROVAL_TIMEOUT_MS);

  const otherTenant = await timed(b.relay.resolve(id, true, 'tb'));
  expect(otherTenant).toMatchObject({ value: false });
  expect(otherTenant.ms).toBeLessThan(AT_ONCE_MS);
  expect(requestKeys()).toEqual([]);

  expect(await b.relay.resolve(id, true, 'ta')).toBe(true);
  await expect(decided).resolves.toBe(true);
  await until(() => (pendingKeys().length === 0 ? true : undefined), 'the decided approval forgotten', 2_000);

  const again = await timed(b.relay.resolve(id, false, 'ta'));
  expect(again).toMatchObject({ value: false });
  expect(again.ms).toBeLessThan(AT_ONCE_MS);
});

test('an approval timed out or cut short is forgotten: a late decision is refused at once', async () => {
  const a = await replica(300);
  const b = await replica();
  const timedOut = randomUUID();
  const first = await announcedWait(a.approvals, timedOut, 't');
  await expect(first.decided).resolves.toBe(false);
  const cut = randomUUID();
  const controller = new AbortController();
  const second = await announcedWait(a.approvals, cut, 't', controller.signal);
  controller.abort();
  await expect(second.decided).resolves.toBe(false);
  await until(() => (pendingKeys().length === 0 ? true : undefined), 'the ended waits forgotten', 2_000);
  const before = requestKeys().length;
  for (const id of [timedOut, cut]) {
    const late = await timed(b.relay.resolve(id, true, 't'));
    expect(late).toMatchObject({ value: false });
    expect(late.ms).toBeLessThan(AT_ONCE_MS);
  }
  expect(requestKeys().length).toBe(before);
});
