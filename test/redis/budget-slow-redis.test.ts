import { useRedisApp } from '../helpers/redis-app';

// With Redis holding writes past the store's 1 s timeout before each call, a call's first attempt
// failed STORE_UNAVAILABLE though its step ran (late) and counted the call against its session
// budget; the retry counted it again: a budget of 3 refused the second call ("this session has
// used its budget of 3 calls") after one call had run. docs/policies.md: a call counts once.

jest.setTimeout(60_000);

const env = useRedisApp({
  routes: { '/charge': (_req, res) => void res.writeHead(200).end('charged') },
  config: (url) => `tools:
  - name: charge
    effect: side_effect
    http: { url: "${url}/charge" }
policies:
  - match: "charge"
    budget: { max_calls_per_session: 3 }
`,
});

test('a slow Redis counts each call once against its session budget', async () => {
  const session = `slow-${Date.now()}`;
  const charge = (k: number) => env.app.dispatch.dispatch({ sessionId: session, calls: [{ id: `c${k}`, name: 'charge', arguments: JSON.stringify({ k }) }] });
  const counts = () => {
    const key = env.redis.cli('--scan', '--pattern', `*${Buffer.from(session).toString('base64url')}*budgets`).trim();
    return env.redis.cli('HGET', key, 'charge').trim();
  };
  // A first call loads the scripts (EVAL) on the connection.
  await env.app.dispatch.dispatch({ sessionId: `warm-${session}`, calls: [{ id: 'w', name: 'charge', arguments: '{"k":0}' }] });
  const ran = env.tools.count('/charge');
  for (let k = 1; k <= 3; k++) {
    env.redis.cli('CLIENT', 'PAUSE', '1200', 'WRITE');
    const { results } = await charge(k);
    expect(results[0]).toMatchObject({ isError: false, output: 'charged', attempts: 2 });
    expect(counts()).toBe(String(k));
  }
  expect(env.tools.count('/charge')).toBe(ran + 3);
  const { results } = await charge(4);
  expect(results[0]).toMatchObject({ isError: true, error: { message: expect.stringContaining('this session has used its budget of 3 calls') } });
  expect(env.tools.count('/charge')).toBe(ran + 3);
});
