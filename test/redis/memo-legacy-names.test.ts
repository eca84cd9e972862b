import { Redis } from 'ioredis';
import { canonicalJson } from '../../src/json';
import { hashKeyMaterial } from '../../src/store';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { fileToolRoutes, fileToolsYaml } from '../helpers/file-tools';

// A rolling upgrade across 01b27b4, which renamed a long (hashed) resource: a replica older than it
// names it by the hash alone, and announces its writes by that name; a newer one by tenant, NUL,
// '#' and the hash. One real app on a real Redis stands for the new replica; the old one is played
// by a client publishing, and listening for, what the old code would on the same channel.

const files = new Map<string, string>();

type App = Awaited<ReturnType<typeof startApp>>;
let redis: TestRedis;
let tools: ToolServer;
let app: App;
let oldReplica: Redis;
let listening: Redis;
/** What the old replica heard on the resource-writes channel, and that channel. */
const heard: { channel: string; resource: unknown }[] = [];

beforeAll(async () => {
  redis = await startRedis({ own: true });
  tools = await startToolServer(fileToolRoutes(files));
  oldReplica = new Redis(redis.url);
  listening = new Redis(redis.url);
  await listening.psubscribe('*:resource-writes');
  listening.on('pmessage', (_pattern, channel, text) => heard.push({ channel, resource: (JSON.parse(text) as { resource: unknown }).resource }));
  app = await startApp(fileToolsYaml(tools.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await app.close();
  oldReplica.disconnect();
  listening.disconnect();
  await tools.close();
  await redis.close();
});

const read = (path: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'r', name: 'read_file', arguments: JSON.stringify({ path }) }] }).then((r) => r.results[0]!);
const write = (path: string, text: string) => app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'w', name: 'write_file', arguments: JSON.stringify({ path, text }) }] }).then((r) => r.results[0]!);
/** The name the code before 01b27b4 gave a long `path` of the tenant an unauthenticated caller is. */
const oldName = (path: string) => hashKeyMaterial(`default\u0000${canonicalJson(path)}`);
const until = async (done: () => boolean) => {
  for (let i = 0; i < 50 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
};

test("a new replica's write of a long key is announced by the old name too, which an old replica matches", async () => {
  const path = `/${'n'.repeat(1000)}`;
  expect((await write(path, 'v1')).isError).toBe(false);
  await until(() => heard.some((h) => h.resource === oldName(path)));
  expect(heard.map((h) => h.resource)).toContain(oldName(path));
  // And by the new one, which new replicas match.
  expect(heard.map((h) => h.resource)).toContain(`default\u0000#${oldName(path)}`);
});

test("an old replica's write of a long key, announced by its old name, drops the new replica's cached read", async () => {
  const path = `/${'o'.repeat(1000)}`;
  files.set(path, 'long v1');
  expect((await read(path)).output).toBe('long v1');
  expect(await read(path)).toMatchObject({ output: 'long v1', cached: true });
  // The old replica writes it and announces it as the old code does (JSON.stringify({ origin, resource })).
  await write(`/${'x'.repeat(1000)}`, 'learn the channel');
  await until(() => heard.length > 0);
  const { channel } = heard[0]!;
  files.set(path, 'long v2');
  await oldReplica.publish(channel, JSON.stringify({ origin: 'a replica older than 01b27b4', resource: oldName(path) }));
  // Asked again until the app has heard: a few times only, as identical results count towards a loop.
  let again = await read(path);
  for (let i = 0; i < 5 && again.cached; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await read(path);
  }
  expect(again).toMatchObject({ output: 'long v2', cached: false });
});
