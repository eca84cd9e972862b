import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { useRedisApp } from '../helpers/redis-app';

// A client that cancels while its side-effecting call's claim is on its way to Redis: the claim
// is taken, but the tool never runs, so the claim is released (phase before), not recorded as an
// unknown outcome that would answer OUTCOME_UNKNOWN to the same call for the record's lifetime.

jest.setTimeout(30_000);

const env = useRedisApp({
  routes: { '/pay': (_req, res) => void res.writeHead(200).end('paid') },
  config: (url) => `tools:
  - name: pay
    effect: side_effect
    retry: { max_attempts: 1 }
    input_schema: '{"type":"object"}'
    http: { url: "${url}/pay" }
`,
});

const pay = (signal?: AbortSignal) => env.app.dispatch.dispatch({ sessionId: 'cancelled', calls: [{ id: 'p', name: 'pay', arguments: '{"ref":"r-1"}' }] }, { signal });

test('a call cancelled while Redis answers its claim releases the claim: the same call runs afterwards', async () => {
  const controller = new AbortController();
  env.redis.signal('SIGSTOP');
  let cancelled: Promise<unknown>;
  try {
    cancelled = pay(controller.signal).catch((error: unknown) => error);
    // The claim is sent and waits for Redis; the client gives up meanwhile.
    await new Promise((r) => setTimeout(r, 150));
    controller.abort();
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    env.redis.signal('SIGCONT');
  }
  expect(String(await cancelled)).toMatch(/CANCELLED|cancel/i);
  // The claim's answer arrives after the cancellation; the release follows it on the connection.
  await new Promise((r) => setTimeout(r, 300));
  expect(env.tools.count('/pay')).toBe(0);
  const again = (await pay()).results[0]!;
  expect(again.error?.kind).toBeUndefined();
  expect(again.isError).toBe(false);
  expect(env.tools.count('/pay')).toBe(1);
});
