import { connectRedis, createRedisStore, whenReady } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A result cut to fit its turn's response names a handle only when Redis kept its whole text: a
// spill the Redis store refuses (no room, or past maxSpillBytes) is answered, not thrown, and the
// cut result named a handle ReadResult did not know.

jest.setTimeout(30_000);

let redis: TestRedis;
let d: TestDispatch;
beforeAll(async () => {
  redis = await startRedis();
  const client = connectRedis(redis.url);
  if (!(await whenReady(client, 10_000))) throw new Error('redis did not become ready');
  const shout = async (args: unknown) => 'A'.repeat((args as { n: number }).n);
  d = await startDispatch(
    `
limits: { max_message_bytes: 65536 }
tools:
  - name: shout
    effect: side_effect
    max_result_chars: 100000
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"},"k":{"type":"integer"}},"required":["n"]}'
    builtin: { name: shout }
`,
    { builtins: new Map([['shout', shout]]), store: createRedisStore(client, { maxSpillBytes: 1_000 }) },
  );
});
afterAll(async () => {
  await d.close();
  await redis.close();
});

test('a cut result whose whole text Redis refused has no handle and says the rest could not be kept', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 'refused', calls: [0, 1].map((k) => ({ id: `c${k}`, name: 'shout', arguments: JSON.stringify({ n: 40_000, k }) })) });
  for (const result of results) {
    expect(result.isError).toBe(false);
    expect(result.truncated).toBe(true);
    expect(result.resultHandle).toBe('');
    expect(result.warnings).toEqual([expect.stringMatching(/fit in one response \(max_response_bytes\); the rest could not be kept$/)]);
  }
});
