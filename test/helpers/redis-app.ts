import { startRedis, type TestRedis } from './redis-server';
import { startApp, startToolServer, type ToolRoute, type ToolServer } from './servers';

type App = Awaited<ReturnType<typeof startApp>>;

/** What {@link useRedisApp} starts; its fields are set once the file's beforeAll has run. */
export interface RedisApp {
  readonly redis: TestRedis;
  readonly tools: ToolServer;
  readonly app: App;
}

/** The Redis, the tool server and the app of a test file that runs one app on Redis. */
export interface RedisAppSetup {
  /** The tool server's routes. */
  readonly routes: Record<string, ToolRoute>;
  /** The app's config, given the tool server's URL. */
  readonly config: (toolsUrl: string) => string;
  /** How Redis is started. @default a private one ({ own: true }) */
  readonly redis?: Parameters<typeof startRedis>[0];
  /** The app's options besides `redisUrl`. @default none */
  readonly app?: Omit<NonNullable<Parameters<typeof startApp>[1]>, 'redisUrl'>;
}

/**
 * Registers the file's beforeAll and afterAll: starts Redis, a tool server and an app whose store
 * is that Redis, and closes them (app first) after the file's tests.
 */
export function useRedisApp(setup: RedisAppSetup): RedisApp {
  const started: Partial<{ redis: TestRedis; tools: ToolServer; app: App }> = {};
  beforeAll(async () => {
    const redis = (started.redis = await startRedis(setup.redis ?? { own: true }));
    const tools = (started.tools = await startToolServer(setup.routes));
    started.app = await startApp(setup.config(tools.url), { ...setup.app, redisUrl: redis.url });
  });
  afterAll(async () => {
    await started.app?.close();
    await started.tools?.close();
    await started.redis?.close();
  });
  return started as RedisApp;
}

/** A tool server and a private Redis, for a file that runs its apps on either store. */
export interface ToolsAndRedis {
  readonly tools: ToolServer;
  readonly redis: TestRedis;
}

/**
 * Registers the file's beforeAll and afterAll: starts a tool server with `routes` and a private
 * Redis, and closes them after the file's tests (its apps are the tests' own, on either store).
 */
export function useToolsAndRedis(routes: Record<string, ToolRoute>): ToolsAndRedis {
  const started: Partial<{ tools: ToolServer; redis: TestRedis }> = {};
  beforeAll(async () => {
    started.tools = await startToolServer(routes);
    started.redis = await startRedis({ own: true });
  });
  afterAll(async () => {
    await started.tools?.close();
    await started.redis?.close();
  });
  return started as ToolsAndRedis;
}
