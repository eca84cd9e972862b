import { join } from 'node:path';
import type * as AppModule from '../app';
import type { PluginFactory } from '../app';
import { authConfigured } from '../auth/auth-configured';
import { ConfigError, loadConfig } from '../config';
import type { Logger } from '../log';
import { projectRoot } from '../server/project-root';
import { DAEMON_ENV, unknownDaemonEnv } from './dispatchd-env';
import { routeGrpcLog } from './grpc-log';
import { isLoopback, type DaemonOptions } from './dispatchd-options';
import { startupFailed } from './startup-failure';
import { appProblem, configProblem, listenFailed } from './startup-problems';

/** Start-up was cut short by a stop signal (its name is the message). */
class StartupStopped extends Error {}

/**
 * Settles as `work` does, or rejects with StartupStopped as soon as `stop` aborts; `work` left
 * behind is handed to `abandon` when it completes, so whatever it started is closed then.
 */
function untilStopped<T>(work: Promise<T>, stop: AbortSignal, abandon?: (late: T) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onStop = () => {
      reject(new StartupStopped(String(stop.reason)));
      work.then((late) => abandon?.(late), () => undefined).catch(() => undefined);
    };
    if (stop.aborted) return onStop();
    stop.addEventListener('abort', onStop, { once: true });
    work.then(
      (value) => {
        stop.removeEventListener('abort', onStop);
        resolve(value);
      },
      (error: unknown) => {
        stop.removeEventListener('abort', onStop);
        reject(error);
      },
    );
  });
}

/**
 * The plugins, each cut short by a stop signal while it is made or attached (waiting for Redis,
 * starting MCP servers): buildApp then closes the plugins made so far and rejects.
 */
function stoppable(factories: readonly PluginFactory[], stop: AbortSignal): PluginFactory[] {
  return factories.map((factory) => async (ctx) => {
    if (stop.aborted) throw new StartupStopped(String(stop.reason));
    const plugin = await untilStopped(factory(ctx), stop, (late) => late.close?.());
    const attach = plugin.attach?.bind(plugin);
    return attach ? { ...plugin, attach: (deps) => untilStopped(Promise.resolve(attach(deps)), stop) } : plugin;
  });
}

/**
 * Serves with `options` until `stop` aborts; resolves with the exit code. Loaded by dispatchd once
 * its options parse: a usage error or --help loads none of this, and a bad config file none of the app.
 */
export async function serve(options: DaemonOptions, env: NodeJS.ProcessEnv, stop: AbortSignal, logger: Logger): Promise<number> {
  routeGrpcLog(logger);
  const unknown = unknownDaemonEnv(env);
  if (unknown.length > 0) logger.warn('unrecognised DISPATCH_* environment variables, ignored', { names: unknown, known: DAEMON_ENV });
  const configFile = options.configFile ?? join(projectRoot(), 'examples', 'tools.yaml');
  let config;
  try {
    config = loadConfig(configFile);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return startupFailed(logger, 1, configProblem(error));
  }
  if (!isLoopback(options.listen) && !authConfigured(config.auth, env, options.tls) && !options.insecure) {
    // A usage error, as a bad flag is: the address comes from a setting, named.
    const setting = options.sources.listen ?? '--listen';
    const text = `refusing to listen on ${options.listen} without authentication; configure auth tokens or pass --insecure (DISPATCH_INSECURE=true), or give a loopback address with ${setting}`;
    return startupFailed(logger, 2, { code: 'insecure_listen', text, error: 'no authentication is configured for an address beyond loopback', fields: { setting, address: options.listen } });
  }
  if (options.metricsListen !== undefined && !isLoopback(options.metricsListen)) {
    logger.warn('metrics endpoint listens beyond loopback without authentication: anyone who reaches it reads every tenant\'s name and their tool names; restrict it to Prometheus (the Helm chart\'s network policy, a firewall)', { metricsListen: options.metricsListen });
  }
  const redisUrl = options.redisUrl ?? config.redisUrl;
  let app;
  try {
    // Only now (the config is good): the app loads gRPC, OpenTelemetry, ioredis and the MCP SDK.
    const { buildApp, PLUGINS } = require('../app') as typeof AppModule;
    app = await buildApp(config, { ...options, redisUrl, logger }, stoppable(PLUGINS, stop));
  } catch (error) {
    if (error instanceof StartupStopped) {
      logger.info('stopped during start-up', { signal: error.message });
      return 0;
    }
    // A ConfigError names its file itself (a policy or an MCP server of the config); other
    // errors (a TLS file, Redis) are not about the config file.
    return startupFailed(logger, 1, appProblem(error, options, { setting: options.redisUrl !== undefined ? (options.sources.redis ?? '--redis') : undefined, file: configFile }));
  }
  let server;
  try {
    server = await app.listen(options.listen);
  } catch (error) {
    const listen = { flag: '--listen', variable: 'DISPATCH_LISTEN', address: options.listen };
    await app.close(0).catch(() => undefined);
    return startupFailed(logger, 1, listenFailed(listen, options.sources.listen, error as Error));
  }
  if (!stop.aborted) {
    const deps = app.deps;
    const tools = deps.registry.list('').length;
    // Whether callers are told apart: off, every caller is tenant `default` (nothing said it before).
    const authentication = authConfigured(config.auth, env, options.tls) ? 'on' : 'off';
    logger.info('dispatchd serving', { listen: options.listen, port: server.port, tools, redis: redisUrl !== undefined, authentication, config: configFile });
    // An empty config file served silently: every call UNKNOWN_TOOL, health SERVING (an SRE's probe).
    const outlasting = deps.registry.list('').filter((tool) => !tool.readOnly && tool.timeoutMs > options.graceMs);
    // An SRE's probe: a 120 s side-effecting call, SIGTERM, and at the 30 s grace's end it was cut
    // off (OUTCOME_UNKNOWN for an hour, though it ran), nothing said at start or at the cut.
    if (outlasting.length > 0) {
      logger.warn("side-effecting tools whose timeout_ms is longer than the drain's grace: a call of theirs still running when a drain's grace ends is cut off, its outcome unknown (the same call then gets OUTCOME_UNKNOWN); raise --grace (DISPATCH_GRACE_MS) to the longest, and the pod's terminationGracePeriodSeconds with it", {
        graceMs: options.graceMs,
        tools: outlasting.slice(0, 10).map((tool) => tool.name),
        count: outlasting.length,
        longestMs: Math.max(...outlasting.map((tool) => tool.timeoutMs)),
      });
    }
    if (tools === 0) logger.warn('no tools to serve yet: the config file declares none (or its MCP servers are not reachable); every call fails UNKNOWN_TOOL until a tenant registers tools or a worker connects', { config: configFile });
    await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  }
  // A systemd ExecReload=kill -HUP took the service down, unsaid: SIGHUP stops, as --help says.
  const hangup = String(stop.reason) === 'SIGHUP' ? { note: 'SIGHUP stops dispatchd: it does not reload (the tokens file is re-read when it changes)' } : {};
  logger.info('draining', { signal: String(stop.reason), graceMs: options.graceMs, ...hangup });
  await app.close(options.graceMs).catch(() => undefined);
  logger.info('stopped');
  return 0;
}
