import { useToolsAndRedis } from '../helpers/redis-app';
import { json, startApp } from '../helpers/servers';

// A Python agent author's probe (and the Redis chaos probe): with key_fields [/to, /subject], the
// same email re-sent with another body was answered with the first one's result, replayed, with no
// warning: the model believed its new body went out. A record now keeps a digest of the whole
// arguments of the call that ran, and a replay for a call whose other arguments differ says so.
// On both stores; a real HTTP tool counting its runs.

const env = useToolsAndRedis({ '/send': json({ sent: true }) });
const NOTE = 'this is the result of an earlier call with the same /to, /subject, replayed: the tool did not run again, and this call\'s other arguments, which differ from that call\'s, were not sent; to send them, change /to or /subject';

describe.each([['memory'], ['redis']])('%s store', (store) => {
  let app: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    app = await startApp(
      `tools:
  - name: send_email
    effect: side_effect
    idempotency: { key_fields: ["/to", "/subject"] }
    http: { url: "${env.tools.url}/send" }
  - name: send_sms
    effect: side_effect
    http: { url: "${env.tools.url}/send" }
`,
      store === 'redis' ? { redisUrl: env.redis.url } : {},
    );
  });
  afterAll(() => app.close());

  const call = (id: string, name: string, args: object) => app.dispatch.dispatch({ sessionId: `other-args-${store}`, calls: [{ id, name, arguments: JSON.stringify(args) }] }).then((r) => r.results[0]!);

  test('a replay for other values beside the key fields says they were not sent; the same arguments replay without it', async () => {
    const before = env.tools.count();
    const first = await call('c1', 'send_email', { to: 'a@example.com', subject: 'hi', body: 'first' });
    expect(first.warnings).toEqual([]);
    const other = await call('c2', 'send_email', { to: 'a@example.com', subject: 'hi', body: 'DIFFERENT' });
    expect(other.idempotentReplay).toBe(true);
    expect(other.output).toBe(first.output);
    expect(other.warnings).toContain(NOTE);
    const same = await call('c3', 'send_email', { subject: 'hi', body: 'first', to: 'a@example.com' });
    expect(same.idempotentReplay).toBe(true);
    expect(same.warnings).not.toContain(NOTE);
    expect(env.tools.count()).toBe(before + 1);
  });

  test('a tool keyed by all its arguments keeps no digest: its replays are of identical arguments', async () => {
    await call('s1', 'send_sms', { to: '+1', text: 'x' });
    const again = await call('s2', 'send_sms', { text: 'x', to: '+1' });
    expect(again.idempotentReplay).toBe(true);
    expect(again.warnings.some((w) => w.includes('replayed: the tool did not run again'))).toBe(false);
  });
});
