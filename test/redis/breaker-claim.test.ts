import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { useRedisApp } from '../helpers/redis-app';

// A side-effecting attempt asks for its idempotency claim only while its tool's breaker lets calls
// through. One that began with the breaker open, and found it half-open once Redis answered (its
// half_open_after_ms passed meanwhile), must not run: it holds no claim, and would leave no record.

jest.setTimeout(30_000);

let failNext = true;

const env = useRedisApp({
  routes: {
    '/pay': (_req, res) => {
      if (failNext) {
        failNext = false;
        res.writeHead(500).end('boom');
      } else res.writeHead(200).end('paid');
    },
  },
  config: (url) => `tools:
  - name: pay
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/pay" }
policies:
  - match: pay
    breaker: { consecutive_failures: 1, half_open_after_ms: 300 }
`,
});

const pay = (ref: string) => env.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'p', name: 'pay', arguments: JSON.stringify({ ref }) }] }).then((r) => r.results[0]!);

test('an attempt that began with the breaker open does not run when it half-opens during the store step', async () => {
  expect((await pay('trip')).isError).toBe(true); // a 500: the breaker opens
  env.redis.signal('SIGSTOP');
  let first: ReturnType<typeof pay>;
  try {
    first = pay('x'); // the breaker is open: no claim asked; the store step waits on Redis
    await new Promise((r) => setTimeout(r, 600)); // half_open_after_ms passes meanwhile
  } finally {
    env.redis.signal('SIGCONT');
  }
  const refused = await first;
  expect(refused.error?.kind).toBe(ErrorKind.BREAKER_OPEN);
  expect(env.tools.count('/pay')).toBe(1);
  // The next attempt claims, runs once and records; the one after it is a replay.
  expect((await pay('x')).isError).toBe(false);
  const again = await pay('x');
  expect(again.idempotentReplay).toBe(true);
  expect(env.tools.count('/pay')).toBe(2);
});
