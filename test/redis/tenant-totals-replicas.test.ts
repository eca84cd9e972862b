// A tenant's totals (limits.max_schema_bytes_per_tenant) are decided by the replica a tool is
// registered on, never again by the others (found in review of 9b7f936): two replicas each
// registering a 550-byte tool of one tenant at once (limit 1000) both answered OK and Redis held
// both, but each replica refused the other's, for good ('A: [x] B: [y] C: [x]'); a replica started
// with a lower limit dropped tools at load. Now every replica holds both, and logs the tenant over.
import { create } from '@bufbuild/protobuf';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../../src/log';
import { createSchemaCompiler, createToolRegistry, RegistryError, type ToolRegistry } from '../../src/registry';
import { connectRedis, createRegistryReplica, type RedisClient, type RegistryReplica } from '../../src/store/redis';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

interface Side { registry: ToolRegistry; warnings: string[]; replica: RegistryReplica; client: RedisClient }
const TENANT = 'team-a';
const spec = (name: string, bytes: number) =>
  create(ToolSpecSchema, { name, effect: Effect.READ_ONLY, inputSchema: JSON.stringify({ type: 'object', description: 'x'.repeat(bytes) }), executor: { case: 'http', value: { url: 'http://127.0.0.1:8/x' } } });
let redis: TestRedis;
const sides: Side[] = [];

/** A replica whose registry allows `maxBytes` of schema per tenant; its registry and replica log to `warnings`. */
async function startSide(maxBytes: number): Promise<Side> {
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (m, f) => warnings.push(`${m} ${JSON.stringify(f)}`), error: (m) => warnings.push(m) };
  const registry = createToolRegistry(createSchemaCompiler(65_536), () => new Set(['http']), { maxSchemaBytesPerTenant: maxBytes, logger });
  const client = connectRedis(redis.url);
  const replica = createRegistryReplica(client, () => connectRedis(redis.url, { queueWhileDown: true }), { prefix: 'totals', logger });
  await until(() => (client.status === 'ready' ? true : undefined), 'the replica to connect', 5000);
  await replica.attach(registry);
  const side = { registry, warnings, replica, client };
  sides.push(side);
  return side;
}
const names = (side: Side) => side.registry.list(TENANT).map((tool) => tool.name).join(',');

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const side of sides) {
    await side.replica.close();
    side.client.disconnect();
  }
  await redis.stop();
});

test("two replicas registering a tenant's tools at once, together over its schema bytes, all end with both", async () => {
  const a = await startSide(1000);
  const b = await startSide(1000);
  a.registry.register([spec('x', 550)], { tenant: TENANT });
  b.registry.register([spec('y', 550)], { tenant: TENANT });
  await until(() => (names(a) === 'x,y' && names(b) === 'x,y' ? true : undefined), 'both replicas to hold both tools', 5000);
  // A replica started later loads both.
  const c = await startSide(1000);
  await until(() => (names(c) === 'x,y' ? true : undefined), 'the late replica to load both tools', 5000);
  for (const side of [a, b, c]) {
    expect(side.warnings.filter((w) => w.includes('could not be registered'))).toEqual([]);
    expect(side.warnings.filter((w) => w.includes('over its limits here'))).toHaveLength(1);
  }
  expect(a.warnings.find((w) => w.includes('over its limits here'))).toContain(`"tenant":"${TENANT}","schemaBytes":${2 * spec('x', 550).inputSchema.length},"maxSchemaBytesPerTenant":1000`);
  // Over its limit, the tenant's registrations that leave it over are refused here.
  expect(() => a.registry.register([spec('z', 10)], { tenant: TENANT })).toThrow(RegistryError);
});

test('a replica started with a lower limit keeps every stored tool, and says the tenant is over', async () => {
  const low = await startSide(600);
  await until(() => (names(low) === 'x,y' ? true : undefined), 'the low-limit replica to load both tools', 5000);
  expect(low.warnings.filter((w) => w.includes('over its limits here'))).toHaveLength(1);
  expect(low.warnings.filter((w) => w.includes('could not be registered'))).toEqual([]);
});
