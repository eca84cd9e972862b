import { useToolsAndRedis } from '../helpers/redis-app';
import { json, startApp } from '../helpers/servers';

// Issue 4 item 3: "Post-tool hooks see the output and can annotate it." A side-effecting call
// answered from its idempotency record (a replay) shows the model the same output as the call
// that ran, and a memoized read gets its notes, but the replay came without them: the post hooks
// ran only after an attempt that reached its tool (the record is written before they run).

const setup = useToolsAndRedis({ '/mail': json({ note: 'deprecated api' }), '/broken': json({ error: 'bad recipient' }, 0, 500), '/read': json({ note: 'deprecated api' }) });

const yaml = (url: string) => `
tools:
  - { name: mail, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${url}/mail" } }
  - { name: broken, effect: side_effect, input_schema: '{"type":"object"}', http: { url: "${url}/broken" } }
  - { name: read, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/read" } }
policies:
  - { match: [mail, read], after: { on: success, contains: "deprecated", warn: "the result mentions a deprecated API" } }
  - { match: broken, after: { on: error, warn: "check the recipient before sending again" } }
`;

describe.each(['memory', 'redis'] as const)('with the %s store', (store) => {
  let d: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    d = await startApp(yaml(setup.tools.url), store === 'redis' ? { redisUrl: setup.redis.url } : {});
  });
  afterAll(() => d.close());
  const once = (sessionId: string, id: string, name: string) => d.dispatch.dispatch({ sessionId, calls: [{ id, name, arguments: '{"to":"a"}' }] }).then((r) => r.results[0]!);

  test('a replayed success carries the notes the call that ran got, once', async () => {
    const before = setup.tools.count('/mail');
    const ran = await once(`s1-${store}`, 'c1', 'mail');
    const replayed = await once(`s1-${store}`, 'c2', 'mail');
    expect(setup.tools.count('/mail') - before).toBe(1);
    expect(ran.warnings).toEqual(['the result mentions a deprecated API']);
    expect(replayed).toMatchObject({ idempotentReplay: true, toolCallId: 'c2' });
    expect(replayed.warnings).toEqual(['the result mentions a deprecated API']);
  });

  test('a replayed error (the tool answered 500) carries the on-error note once', async () => {
    const before = setup.tools.count('/broken');
    const ran = await once(`s2-${store}`, 'c1', 'broken');
    const replayed = await once(`s2-${store}`, 'c2', 'broken');
    expect(setup.tools.count('/broken') - before).toBe(1);
    expect(ran.warnings).toContain('check the recipient before sending again');
    expect(replayed).toMatchObject({ idempotentReplay: true, isError: true });
    expect(replayed.warnings.filter((w) => w === 'check the recipient before sending again')).toHaveLength(1);
  });

  test('as a memoized read does', async () => {
    await once(`s3-${store}`, 'c1', 'read');
    const hit = await once(`s3-${store}`, 'c2', 'read');
    expect(hit.cached).toBe(true);
    expect(hit.warnings).toEqual(['the result mentions a deprecated API']);
  });
});
