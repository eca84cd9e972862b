import Redis from 'ioredis';
import { createLogger } from '../../src/log';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { fileToolRoutes, fileToolsYaml } from '../helpers/file-tools';

// A resource write whose announcement Redis refused is announced again until Redis takes it: the
// other replicas then drop their memoized reads of the resource. Before, the PUBLISH failed once
// and was dropped (a debug line), and replica A served its stale read until memoize's TTL. Replica
// B connects as its own ACL user, whose PUBLISH the test takes away and gives back: A's connections
// (its subscription, its probes) are untouched, so A forgets nothing else meanwhile.

const files = new Map<string, string>();

const CHANNEL = 'dispatch:resource-writes';
let redis: TestRedis;
let tools: ToolServer;
let admin: Redis;
let heard: Redis;
let a: Awaited<ReturnType<typeof startApp>>;
let b: Awaited<ReturnType<typeof startApp>>;
const messages: string[] = [];
const logged: { level: string; message: string }[] = [];
beforeAll(async () => {
  redis = await startRedis({ own: true });
  admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  await admin.call('ACL', 'SETUSER', 'writer', 'on', '>writer-secret', '~*', '&*', '+@all');
  heard = new Redis(redis.url);
  heard.on('message', (_channel: string, text: string) => messages.push(text));
  await heard.subscribe(CHANNEL);
  tools = await startToolServer(fileToolRoutes(files));
  a = await startApp(fileToolsYaml(tools.url), { redisUrl: redis.url });
  const logger = createLogger('info', (line) => logged.push(JSON.parse(line) as { level: string; message: string }) > 0);
  b = await startApp(fileToolsYaml(tools.url), { redisUrl: `redis://writer:writer-secret@127.0.0.1:${redis.port}`, logger });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await tools?.close();
  heard?.disconnect();
  admin?.disconnect();
  await redis?.close();
});

const read = (path: string) => a.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'r', name: 'read_file', arguments: JSON.stringify({ path }) }] }).then((r) => r.results[0]!);
const write = (path: string, text: string) => b.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'w', name: 'write_file', arguments: JSON.stringify({ path, text }) }] }).then((r) => r.results[0]!);
// The memo cache's name of a resource: its tenant, a NUL, and the resource_key value as JSON.
const announced = (path: string) => messages.filter((m) => (JSON.parse(m) as { resource?: string }).resource === `default\u0000${JSON.stringify(path)}`).length;

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}

test("a write announcement Redis refused is published again once it takes it, and A's memoized read of the resource goes then, its others stay", async () => {
  files.set('/e', 'e1');
  files.set('/f', 'f1');
  expect((await read('/e')).output).toBe('e1');
  expect((await read('/f')).output).toBe('f1');
  expect(await read('/e')).toMatchObject({ output: 'e1', cached: true });
  await admin.call('ACL', 'SETUSER', 'writer', '-publish');
  try {
    expect((await write('/e', 'e2')).isError).toBe(false);
    // Refused (NOPERM), and refused again while the permission stays away: A still serves e1.
    await new Promise((r) => setTimeout(r, 400));
    expect(announced('/e')).toBe(0);
    expect(await read('/e')).toMatchObject({ output: 'e1', cached: true });
    expect(logged.filter((l) => l.level === 'warn' && l.message.startsWith('a resource write announcement failed'))).toHaveLength(1);
  } finally {
    await admin.call('ACL', 'SETUSER', 'writer', '+publish');
  }
  // Published at B's next try (its waits double from 100 ms, up to 5 s), once.
  await until(() => announced('/e') > 0);
  await new Promise((r) => setTimeout(r, 100));
  expect(announced('/e')).toBe(1);
  expect(await read('/e')).toMatchObject({ output: 'e2', cached: false });
  expect(await read('/f')).toMatchObject({ output: 'f1', cached: true });
  await until(() => logged.some((l) => l.message === 'resource write announcements published again'));
});

test('an announcement that any resource may have been written drops every read A memoized', async () => {
  files.set('/g', 'g1');
  expect((await read('/g')).output).toBe('g1');
  expect(await read('/g')).toMatchObject({ output: 'g1', cached: true });
  // What a replica holding more refused writes than it keeps publishes (WriteAnnouncerOptions.maxWaiting).
  await admin.publish(CHANNEL, JSON.stringify({ origin: 'another-replica', all: true }));
  await until(() => messages.some((m) => m.includes('"all":true')));
  await new Promise((r) => setTimeout(r, 100));
  expect(await read('/g')).toMatchObject({ output: 'g1', cached: false });
});
