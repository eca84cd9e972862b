import { create, toBinary } from '@bufbuild/protobuf';
import { Redis } from 'ioredis';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { registryKeys } from '../../src/store/redis';
import { startApp } from '../helpers/servers';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { stdioServerYaml } from '../mcp/mcp-harness';
import { eventually } from '../workers/worker-harness';

type AppT = Awaited<ReturnType<typeof startApp>>;

// DESIGN section 11: the config file's tools, and those a replica imports from its MCP servers,
// are each replica's own; only tenants' tools are shared through Redis.
const MCP_YAML = `mcp_servers:\n  - ${stdioServerYaml('files', { prefix: 'files_' })}\n`;
const CONFIG_ECHO_YAML = 'tools:\n  - { name: files_echo, effect: read_only, builtin: { name: echo } }\n';
const keys = registryKeys();

const names = async (t: AppT) => (await t.registry.listTools({})).tools.map((x) => `${x.name}(${x.executor.case ?? ''})`).sort();
const echo = (t: AppT) => t.dispatch.dispatch({ sessionId: 's1', calls: [{ id: 'c1', name: 'files_echo', arguments: '{"x":1}' }] }).then((r) => r.results[0]!);

/** Registers a tenant tool on `from` and waits until `to` lists it: `to` has then handled every announcement `from` sent before. */
async function settle(from: AppT, to: AppT, marker: string): Promise<void> {
  await from.registry.registerTools({ tools: [{ name: marker, inputSchema: '{}', effect: Effect.READ_ONLY, executor: { case: 'builtin', value: { name: 'echo' } } }] });
  await eventually(async () => (await names(to)).includes(`${marker}(builtin)`), 5_000, `${marker} on the other replica`);
}

describe("the operator's tools with replicas sharing Redis", () => {
  let redis: TestRedis;
  let client: Redis;
  const apps: AppT[] = [];
  const start = async (yaml: string) => {
    const app = await startApp(yaml, { redisUrl: redis.url });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    redis = await startRedis({ own: true });
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.close();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await client.flushall();
  });

  it("keeps one replica's MCP tools out of the others, whose config tools stay their own", async () => {
    const b = await start(CONFIG_ECHO_YAML);
    const a = await start(MCP_YAML);
    await eventually(async () => (await names(a)).includes('files_echo(mcp)'), 10_000, 'the MCP tools on replica a');
    await settle(a, b, 'marker_one');

    expect(await client.exists(keys.tools(''))).toBe(0);
    expect(await names(b)).toEqual(['files_echo(builtin)', 'marker_one(builtin)']);
    const result = await echo(b);
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.output)).toEqual({ x: 1 });

    const c = await start('');
    expect(await names(c)).toEqual(['marker_one(builtin)']);
    expect(await names(a)).toContain('files_echo(mcp)');
  }, 30_000);

  it('ignores the operator tools an older version left in Redis, and its announcements of them', async () => {
    const stale = create(ToolSpecSchema, { name: 'files_echo', inputSchema: '{}', effect: Effect.READ_ONLY, executor: { case: 'mcp', value: { server: 'files', tool: 'echo' } } });
    const text = Buffer.from(toBinary(ToolSpecSchema, stale)).toString('base64');
    await client.hset(keys.tools(''), 'files_echo', text);
    await client.sadd(keys.tenants, '');

    const b = await start(CONFIG_ECHO_YAML);
    const c = await start('');
    expect(await names(b)).toEqual(['files_echo(builtin)']);
    expect(await names(c)).toEqual([]);

    await client.publish(keys.channel, JSON.stringify({ origin: 'an-older-replica', type: 'register', tenant: '', specs: [text] }));
    await client.publish(keys.channel, JSON.stringify({ origin: 'an-older-replica', type: 'remove', tenant: '', name: 'files_echo' }));
    await settle(c, b, 'marker_two');
    expect(await names(b)).toEqual(['files_echo(builtin)', 'marker_two(builtin)']);
    expect(JSON.parse((await echo(b)).output)).toEqual({ x: 1 });
    expect(await names(c)).toEqual(['marker_two(builtin)']);
  }, 30_000);
});
