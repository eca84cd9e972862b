import Redis from 'ioredis';
import { closeReplicaPair, startReplicaPair, type Replica, type ReplicaPair } from '../guards/replica-pair';
import { fileToolRoutes, fileToolsYaml } from '../helpers/file-tools';

// With Redis, a write on one replica drops the memoized reads of its resource on every replica
// sharing it (announced over pub/sub, as session ends are), not only on the replica that wrote:
// a session reading a file on A after writing it on B sees its write. Two apps, one real Redis.

const files = new Map<string, string>();

let pair: ReplicaPair;
beforeAll(async () => {
  pair = await startReplicaPair(fileToolsYaml, fileToolRoutes(files));
});
afterAll(async () => closeReplicaPair(pair));

const read = (app: Replica, path: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'r', name: 'read_file', arguments: JSON.stringify({ path }) }] }).then((r) => r.results[0]!);
const write = (app: Replica, path: string, text: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'w', name: 'write_file', arguments: JSON.stringify({ path, text }) }] }).then((r) => r.results[0]!);

test('a write on B drops the read A memoized of its resource; reads of other resources stay', async () => {
  files.set('/a', 'v1');
  files.set('/b', 'b1');
  expect((await read(pair.a, '/a')).output).toBe('v1');
  expect((await read(pair.a, '/b')).output).toBe('b1');
  expect(await read(pair.a, '/a')).toMatchObject({ output: 'v1', cached: true });
  expect((await write(pair.b, '/a', 'v2')).isError).toBe(false);
  // Asked again until A has heard: a few times only, as identical results count towards a loop.
  let again = await read(pair.a, '/a');
  for (let i = 0; i < 5 && again.cached; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await read(pair.a, '/a');
  }
  expect(again).toMatchObject({ output: 'v2', cached: false });
  expect(await read(pair.a, '/b')).toMatchObject({ output: 'b1', cached: true });
});

test('a long resource_key value (a hashed name) is announced the same way', async () => {
  const path = `/${'p'.repeat(1000)}`;
  files.set(path, 'long v1');
  expect((await read(pair.a, path)).output).toBe('long v1');
  expect(await read(pair.a, path)).toMatchObject({ cached: true });
  await write(pair.b, path, 'long v2');
  let again = await read(pair.a, path);
  for (let i = 0; i < 5 && again.cached; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await read(pair.a, path);
  }
  expect(again).toMatchObject({ output: 'long v2', cached: false });
});

test("a write announced while A's subscription was down drops A's memoized reads once A subscribes again", async () => {
  const admin = new Redis(pair.redis.url, { maxRetriesPerRequest: 0 });
  try {
    files.set('/c', 'c1');
    files.set('/d', 'd1');
    expect((await read(pair.a, '/c')).output).toBe('c1');
    expect((await read(pair.a, '/d')).output).toBe('d1');
    expect(await read(pair.a, '/c')).toMatchObject({ output: 'c1', cached: true });
    // Every subscription drops and none can reconnect (no connection is taken past maxclients):
    // B's announcement of the write reaches no subscriber.
    await admin.config('SET', 'maxclients', '1');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    expect((await write(pair.b, '/c', 'c2')).isError).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await read(pair.a, '/c')).toMatchObject({ output: 'c1', cached: true });
    await admin.config('SET', 'maxclients', '10000');
    // A subscribes again within its reconnection delay (1 s at most), and forgets every memoized
    // read. Waited for without reading: identical results count towards a loop.
    const subscribers = async () => ((await admin.call('PUBSUB', 'NUMSUB', 'dispatch:resource-writes')) as [string, number])[1];
    for (let waited = 0; (await subscribers()) < 2 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await read(pair.a, '/c')).toMatchObject({ output: 'c2', cached: false });
    // Every read went, not only the one written: which were written is not known.
    expect(await read(pair.a, '/d')).toMatchObject({ output: 'd1', cached: false });
  } finally {
    await admin.config('SET', 'maxclients', '10000').catch(() => undefined);
    admin.disconnect();
  }
});
