import * as grpc from '@grpc/grpc-js';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';

// GetToolStats of one tool reads that tool's eight fields from the tenant's hash (HMGET of
// `<tool>\0<counter>`) and its window field: every field carries the name. A name no tool can have
// (a registered name is at most 128 characters) was read all the same, so a request of a 3 MB name
// sent ~27 MB to Redis on the connection every tenant's shared counts flush and read through.

jest.setTimeout(60_000);

const CONFIG = `
tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
`;

let redis: TestRedis;
let d: Awaited<ReturnType<typeof startApp>>;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  d = await startApp(CONFIG, { redisUrl: redis.url });
});

afterAll(async () => {
  await d?.close();
  await redis?.close();
});

/** Bytes Redis has read from its clients so far. */
const redisInputBytes = () => Number(/total_net_input_bytes:(\d+)/.exec(redis.cli('INFO', 'stats'))![1]);

test('a tool name longer than any tool can have is NOT_FOUND without sending it to Redis', async () => {
  await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] });
  // A read of a real tool goes to Redis (scope `service`), as before.
  expect((await d.registry.getToolStats({ tool: 'echo' })).stats[0]?.calls).toBe(1n);
  const before = redisInputBytes();
  const name = 'x'.repeat(3_000_000);
  await expect(d.registry.getToolStats({ tool: name })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  // Not 8 x 3 MB of HMGET fields and 3 MB of HGET: only the server's own traffic (flushes, INFO).
  expect(redisInputBytes() - before).toBeLessThan(100_000);
  await expect(d.registry.getToolStats({ tool: 'x'.repeat(129) })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  expect((await d.registry.getToolStats({ tool: 'echo' })).stats[0]?.calls).toBe(1n);
});
