import { useRedisApp } from '../helpers/redis-app';

// A side-effecting call whose claim is answered too late fails STORE_UNAVAILABLE (phase before,
// not run) and is retried ~250 ms later; its claim landed meanwhile. The retry used to find that
// claim and end the call IN_PROGRESS ("an identical call is still running"), though nothing ran.

jest.setTimeout(30_000);

const env = useRedisApp({
  routes: { '/pay': (_req, res) => void res.writeHead(200).end('paid') },
  config: (url) => `tools:
  - name: pay
    effect: side_effect
    http: { url: "${url}/pay" }
`,
});

test('the automatic retry after a claim answered too late runs the call, once', async () => {
  const pay = (amount: number) => env.app.dispatch.dispatch({ sessionId: 'late', calls: [{ id: 'p', name: 'pay', arguments: JSON.stringify({ amount }) }] });
  expect((await pay(1)).results[0]).toMatchObject({ isError: false, output: 'paid' });
  // Redis holds writes (the claim's script among them) past the store's 1 s timeout.
  env.redis.cli('CLIENT', 'PAUSE', '1200', 'WRITE');
  const { results } = await pay(2);
  expect(results[0]).toMatchObject({ isError: false, output: 'paid', attempts: 2, idempotentReplay: false });
  expect(env.tools.count('/pay')).toBe(2);
  expect((await pay(2)).results[0]).toMatchObject({ isError: false, output: 'paid', idempotentReplay: true });
  expect(env.tools.count('/pay')).toBe(2);
});
