import { startDaemon, type Daemon } from '../helpers/daemon';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { until } from '../helpers/until';

// A pod starting while Redis was away (a rollout or a reschedule overlapping a Redis restart)
// never served: the worker relay's start-up awaited its subscription, which waits for Redis
// without end, so dispatchd did not listen, read-only calls failed too, and the startup probe
// restarted it in a loop. Now it serves after its bounded waits, and the relay catches up.

jest.setTimeout(60_000);

let redis: TestRedis;
let daemon: Daemon | undefined;

beforeAll(async () => {
  redis = await startRedis({ own: true });
  await redis.stop();
});

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await daemon?.exited;
  await redis.close();
});

test('dispatchd serves with Redis unreachable at start; read-only calls run; the worker relay subscribes once Redis is back', async () => {
  const started = Date.now();
  daemon = await startDaemon(['--redis', redis.url]);
  // The store waits 5 s, the worker relay 2 s more: then it serves.
  expect(Date.now() - started).toBeLessThan(12_000);
  expect(daemon.stderr()).toMatch(/redis is not reachable yet; side-effecting calls fail with STORE_UNAVAILABLE/);
  expect(daemon.stderr()).toMatch(/redis is not reachable yet; calls to workers on other replicas fail UNAVAILABLE/);
  const ctl = dispatchctlAt(() => `127.0.0.1:${daemon!.port}`);
  const echo = await ctl('call', 'echo', '{"text":"still here"}');
  expect(echo.code).toBe(0);
  expect(echo.out).toContain('still here');

  await redis.start();
  const channels = await until(() => {
    const listed = redis.cli('PUBSUB', 'CHANNELS', 'dispatch:worker:replica:*').trim();
    return listed === '' ? undefined : listed;
  }, "the worker relay's subscription", 20_000);
  expect(channels).toMatch(/^dispatch:worker:replica:[0-9a-f-]{36}$/);
  expect(daemon.child.exitCode).toBeNull();
});
