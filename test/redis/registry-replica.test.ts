import { randomUUID } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { Redis } from 'ioredis';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { createSchemaCompiler, createToolRegistry, type SchemaCompiler, type ToolRegistry } from '../../src/registry';
import { connectRedis, createRegistryReplica, registryKeys, type RedisClient, type RegistryReplica } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

/** A registry replicated through Redis, with the warnings its replica logged. */
interface Side {
  readonly registry: ToolRegistry;
  readonly warnings: string[];
  readonly replica: RegistryReplica;
  readonly client: RedisClient;
}

const TENANT = 'team-a';
const spec = (name: string, description = '') =>
  create(ToolSpecSchema, { name, description, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } });

let redis: TestRedis;
let prefix: string;
let a: Side;
let b: Side;
/** Publishes as a third party would, and hears every announcement as it was sent. */
let publisher: Redis;
let listener: Redis;
let heard: string[] = [];

async function startSide(compiler: SchemaCompiler = createSchemaCompiler(65_536)): Promise<Side> {
  const registry = createToolRegistry(compiler, () => new Set(['http']));
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) };
  const client = connectRedis(redis.url);
  const replica = createRegistryReplica(client, () => connectRedis(redis.url, { queueWhileDown: true }), { prefix, logger });
  await until(() => (client.status === 'ready' ? true : undefined), 'the replica to connect', 5000);
  await replica.attach(registry);
  return { registry, warnings, replica, client };
}

/** Registers a fresh tool on A and waits until B has it: B has then handled every announcement sent before. */
async function settle(): Promise<void> {
  const marker = `marker_${randomUUID().slice(0, 8)}`;
  a.registry.register([spec(marker)], { tenant: TENANT });
  await until(() => b.registry.lookup(TENANT, marker), `${marker} on replica B`, 5000);
}

/** The announcement of `type` A sent last, once heard, as a replica of another origin would send it. */
async function resent(type: 'register' | 'remove'): Promise<string> {
  const last = () => heard.map((text) => JSON.parse(text) as { type: string }).filter((m) => m.type === type).at(-1);
  return JSON.stringify({ ...(await until(last, `a ${type} announcement`, 5000)), origin: 'a-stalled-replica' });
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.close();
});

beforeEach(async () => {
  prefix = `test-${randomUUID().slice(0, 8)}`;
  const { channel } = registryKeys(prefix);
  heard = [];
  publisher = new Redis(redis.url);
  listener = new Redis(redis.url);
  listener.on('message', (_channel: string, message: string) => heard.push(message));
  await listener.subscribe(channel);
  [a, b] = [await startSide(), await startSide()];
  const deadline = Date.now() + 5000;
  while (Number((await publisher.pubsub('NUMSUB', channel))[1]) < 3) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the replicas to subscribe');
    await new Promise((r) => setTimeout(r, 20));
  }
});

afterEach(async () => {
  for (const side of [a, b]) {
    await side.replica.close();
    side.client.disconnect();
  }
  publisher.disconnect();
  listener.disconnect();
});

test('a registration and a removal on one replica reach the other', async () => {
  a.registry.register([spec('lookup', 'v1')], { tenant: TENANT });
  await until(() => b.registry.lookup(TENANT, 'lookup'), 'lookup on replica B', 5000);
  a.registry.register([spec('lookup', 'v2')], { tenant: TENANT, replace: true });
  await until(() => (b.registry.lookup(TENANT, 'lookup')?.spec.description === 'v2' ? true : undefined), 'lookup v2 on replica B', 5000);
  a.registry.remove(TENANT, 'lookup');
  await until(() => (b.registry.lookup(TENANT, 'lookup') ? undefined : true), 'lookup removed on replica B', 5000);
  expect(b.warnings).toEqual([]);
});

test('a registration announced late, after its removal, does not bring the tool back', async () => {
  a.registry.register([spec('gone')], { tenant: TENANT });
  await until(() => b.registry.lookup(TENANT, 'gone'), 'gone on replica B', 5000);
  a.registry.remove(TENANT, 'gone');
  await until(() => (b.registry.lookup(TENANT, 'gone') ? undefined : true), 'gone removed on replica B', 5000);

  await publisher.publish(registryKeys(prefix).channel, await resent('register'));
  await settle();
  expect(b.registry.lookup(TENANT, 'gone')).toBeUndefined();
  expect(b.warnings).toEqual([]);
});

test('a removal announced late, after the tool was registered again, does not remove it', async () => {
  a.registry.register([spec('kept', 'v1')], { tenant: TENANT });
  a.registry.remove(TENANT, 'kept');
  a.registry.register([spec('kept', 'v2')], { tenant: TENANT });
  await until(() => (b.registry.lookup(TENANT, 'kept')?.spec.description === 'v2' ? true : undefined), 'kept v2 on replica B', 5000);

  await publisher.publish(registryKeys(prefix).channel, await resent('remove'));
  await settle();
  expect(b.registry.lookup(TENANT, 'kept')?.spec.description).toBe('v2');
});

test('an older version announced late does not replace the newer one', async () => {
  a.registry.register([spec('versioned', 'v1')], { tenant: TENANT });
  const v1 = await resent('register');
  a.registry.register([spec('versioned', 'v2')], { tenant: TENANT, replace: true });
  await until(() => (b.registry.lookup(TENANT, 'versioned')?.spec.description === 'v2' ? true : undefined), 'versioned v2 on replica B', 5000);

  await publisher.publish(registryKeys(prefix).channel, v1);
  await settle();
  expect(b.registry.lookup(TENANT, 'versioned')?.spec.description).toBe('v2');
});

test('when the tools cannot be read again, the announcement is applied as it says, with a warning', async () => {
  // A value of the wrong type under the tenant's hash: HMGET fails with WRONGTYPE.
  await publisher.set(registryKeys(prefix).tools('broken'), 'not a hash');
  const specs = [Buffer.from(toBinary(ToolSpecSchema, spec('fallback'))).toString('base64')];
  await publisher.publish(registryKeys(prefix).channel, JSON.stringify({ origin: 'a-replica-of-the-previous-version', type: 'register', tenant: 'broken', specs }));
  await until(() => b.registry.lookup('broken', 'fallback'), 'fallback on replica B', 5000);
  expect(b.warnings).toEqual(['could not read changed tools from redis; applying the announcement as it says']);
});

test("a reconnection's reload compiles only the tools that changed, not every stored one again", async () => {
  const real = createSchemaCompiler(65_536);
  let compiles = 0;
  const c = await startSide({ ...real, compile: (...args) => (compiles++, real.compile(...args)) });
  try {
    a.registry.register([spec('one'), spec('two'), spec('three')], { tenant: TENANT });
    await until(() => c.registry.lookup(TENANT, 'three'), 'the tools on replica C', 5000);
    expect(compiles).toBe(3);
    const held = c.registry.lookup(TENANT, 'one');
    // A tool written while C was away (its announcement missed): the reload after C reconnects finds it.
    c.client.disconnect(true);
    await publisher.hset(registryKeys(prefix).tools(TENANT), 'four', Buffer.from(toBinary(ToolSpecSchema, spec('four'))).toString('base64'));
    await until(() => c.registry.lookup(TENANT, 'four'), "the reload's new tool on replica C", 10_000);
    expect(compiles).toBe(4);
    expect(c.registry.lookup(TENANT, 'one')).toBe(held);
  } finally {
    await c.replica.close();
    c.client.disconnect();
  }
});
