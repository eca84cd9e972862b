import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import { breakerStatsOf } from '../../src/guards';
import { useToolsAndRedis } from '../helpers/redis-app';
import { json, startApp } from '../helpers/servers';
import { errorJson } from '../guards/helpers';

// Issue 4 item 4 and DESIGN section 3: "per attempt (every retry re-fires all of it)" and "A
// correction re-runs the whole attempt, so every event, hook, detection and health step fires
// again". The existing tests count TOOL_PRE events per attempt; none showed the pre-tool hooks,
// the policy endpoint, the post-tool hooks and the breaker each seeing every attempt, a retry's
// and a fallback's, nor with the Redis store.

const setup = useToolsAndRedis({ '/busy': json({ busy: true }, 0, 503), '/backup': json({ from: 'backup' }), '/policy': json({ decision: 'allow' }) });

const yaml = (url: string) => `
tools:
  - { name: busy, effect: read_only, retry: { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 2 }, input_schema: '{"type":"object"}', http: { url: "${url}/busy" } }
  - { name: leaning, effect: read_only, retry: { max_attempts: 1 }, fallback_tool: backup, input_schema: '{"type":"object"}', http: { url: "${url}/busy" } }
  - { name: backup, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/backup" } }
policies:
  - { endpoint: { url: "${url}/policy" } }
  - { match: busy, breaker: { consecutive_failures: 5, half_open_after_ms: 60000 } }
`;

test.each(['memory', 'redis'] as const)('every attempt is seen by the hooks, the endpoint and the breaker (%s store)', async (store) => {
  const seen: string[] = [];
  const plugin = createGuardsPlugin({
    preHooks: [({ tool, attempt }) => (seen.push(`pre ${tool.name} ${attempt}`), { action: 'allow' })],
    postHooks: [({ tool, attempt, isError }) => (seen.push(`post ${tool.name} ${attempt} ${isError ? 'error' : 'ok'}`), [`note ${attempt}`])],
  });
  const d = await startApp(yaml(setup.tools.url), store === 'redis' ? { redisUrl: setup.redis.url } : {}, PLUGINS.map((f) => (f === guardsPlugin ? plugin : f)));
  try {
    const policyBefore = setup.tools.count('/policy');
    const retried = await d.dispatch.dispatch({ sessionId: `r-${store}`, calls: [{ id: 'c1', name: 'busy', arguments: '{"n":1}' }] });
    expect(retried.results[0]).toMatchObject({ isError: true, attempts: 2 });
    // The result the model reads is its last attempt's, with that attempt's note.
    expect(retried.results[0]!.warnings).toEqual(['note 2']);
    expect(seen.splice(0)).toEqual(['pre busy 1', 'post busy 1 error', 'pre busy 2', 'post busy 2 error']);
    expect(setup.tools.count('/policy') - policyBefore).toBe(2);

    const fell = await d.dispatch.dispatch({ sessionId: `f-${store}`, calls: [{ id: 'c2', name: 'leaning', arguments: '{"n":2}' }] });
    expect(fell.results[0]).toMatchObject({ isError: false, output: '{"from":"backup"}', resolvedToolName: 'backup', attempts: 2 });
    expect(seen.splice(0)).toEqual(['pre leaning 1', 'post leaning 1 error', 'pre backup 2', 'post backup 2 ok']);
    expect(setup.tools.count('/policy') - policyBefore).toBe(4);
    // Health is recorded under the tool each attempt ran on: the fallback's success is backup's.
    const stats = breakerStatsOf(d.app.deps.guards)!;
    expect([stats.healthScore('leaning'), stats.healthScore('backup')]).toEqual([0, 1]);

    // The breaker counts attempts, not calls: c1's two failing attempts and c3's two leave it
    // closed at 4; c4's first attempt is the fifth failure, which opens it, and c4's retry is refused.
    const busyBefore = setup.tools.count('/busy');
    await d.dispatch.dispatch({ sessionId: `b-${store}`, calls: [{ id: 'c3', name: 'busy', arguments: '{"n":3}' }] });
    expect(stats.state('busy')).toBe('closed');
    const refused = await d.dispatch.dispatch({ sessionId: `b-${store}`, calls: [{ id: 'c4', name: 'busy', arguments: '{"n":4}' }] });
    expect(setup.tools.count('/busy') - busyBefore).toBe(3);
    expect(stats.state('busy')).toBe('open');
    expect(refused.results[0]!.attempts).toBe(2);
    // Its own failure is what the model reads, noting that the tool is now unavailable.
    expect(errorJson(refused.results[0]!.output).kind).toBe('TOOL_ERROR');
    // The refused attempt ran no tool: no post-tool hook saw it.
    expect(seen.splice(0)).toEqual(['pre busy 1', 'post busy 1 error', 'pre busy 2', 'post busy 2 error', 'pre busy 1', 'post busy 1 error', 'pre busy 2']);
  } finally {
    await d.close();
  }
});
