import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { buildApp, PLUGINS, type PluginFactory } from '../app';
import { ListenFailure, listenProblem } from '../app/listen-failure';
import { authConfigured } from '../auth';
import { ConfigError, loadConfig } from '../config';
import { createLogger, type Logger } from '../log';
import { logLevelFromEnv } from '../log/logger';
import { projectRoot } from '../server';
import { routeDiagnostics } from '../telemetry/diag-logger';
import { DAEMON_ENV, unknownDaemonEnv } from './dispatchd-env';
import { logStrayRejections } from './stray-rejections';
import { HelpRequested, isLoopback, parseDaemonOptions, renamed } from './dispatchd-options';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

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

/** How grpc-js begins the error it logs itself when no address could be bound. */
const BIND_FAILURE = 'No address added';

/**
 * grpc-js's logger as its default (console.error, with the level's letter), less its own
 * "E No address added ..." line when the port cannot be bound: dispatchd reports that in one
 * line of its own (listenProblem). grpc-js offers no way to read the logger in place, so this
 * one is set for the whole process.
 */
function dropBindFailureLog(): void {
  const write = (letter: string) => (message?: unknown, ...rest: unknown[]) => console.error(`${letter} ${String(message)}`, ...rest);
  const error = write('E');
  const dropped = (message?: unknown, ...rest: unknown[]) => {
    if (!String(message).startsWith(BIND_FAILURE)) error(message, ...rest);
  };
  grpc.setLogger({ error: dropped, info: write('I'), debug: write('D') });
}

/** Runs the daemon until SIGTERM or SIGINT; resolves with the process exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // First of all: in a container without an init, node is PID 1, and a signal it has no handler
  // for is ignored, so a pod deleted while this starts would wait out its whole grace period.
  // A second signal while stopping (a double Ctrl-C, a supervisor that sends two) leaves the drain
  // to finish: Node's default action would end the process at once, cutting off the calls in
  // flight with their outcome unknown (one could then run twice). SIGKILL stops at once.
  const stop = new AbortController();
  let onRepeat = (signal: NodeJS.Signals): void => void process.stderr.write(`dispatchd: ${signal} again: already stopping; the drain goes on (SIGKILL stops at once)\n`);
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) onRepeat(signal);
    else stop.abort(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  try {
    return await run(argv, env, stop.signal, (logger) => {
      onRepeat = (signal) => logger.warn('stop signal again: already stopping; the drain goes on (SIGKILL stops at once)', { signal });
    });
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  }
}

async function run(argv: readonly string[], env: NodeJS.ProcessEnv, stop: AbortSignal, logging: (logger: Logger) => void): Promise<number> {
  let logger;
  let options;
  try {
    options = parseDaemonOptions(argv, env);
    logger = createLogger(logLevelFromEnv(env));
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${error.message}\n`);
      return 0;
    }
    process.stderr.write(`dispatchd: ${(error as Error).message}\n`);
    return 2;
  }
  logging(logger);
  const stopLogging = logStrayRejections(logger);
  const stopDiagnostics = routeDiagnostics(logger);
  try {
    return await serve(options, env, stop, logger);
  } finally {
    stopDiagnostics();
    stopLogging();
  }
}

async function serve(options: ReturnType<typeof parseDaemonOptions>, env: NodeJS.ProcessEnv, stop: AbortSignal, logger: ReturnType<typeof createLogger>): Promise<number> {
  const unknown = unknownDaemonEnv(env);
  if (unknown.length > 0) logger.warn('unrecognised DISPATCH_* environment variables, ignored', { names: unknown, known: DAEMON_ENV });
  const configFile = options.configFile ?? join(projectRoot(), 'examples', 'tools.yaml');
  let config;
  try {
    config = loadConfig(configFile);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`dispatchd: bad config: ${error.message}\n`);
    return 1;
  }
  if (!isLoopback(options.listen) && !authConfigured(config.auth, env, options.tls) && !options.insecure) {
    // A usage error, as a bad flag is: the address comes from a setting, named.
    process.stderr.write(`dispatchd: refusing to listen on ${options.listen} without authentication; configure auth tokens or pass --insecure (DISPATCH_INSECURE=true), or give a loopback address with ${options.sources.listen ?? '--listen'}\n`);
    return 2;
  }
  if (options.metricsListen !== undefined && !isLoopback(options.metricsListen)) {
    logger.warn('metrics endpoint listens beyond loopback without authentication: anyone who reaches it reads every tenant\'s name and their tool names; restrict it to Prometheus (the Helm chart\'s network policy, a firewall)', { metricsListen: options.metricsListen });
  }
  const redisUrl = options.redisUrl ?? config.redisUrl;
  let app;
  try {
    app = await buildApp(config, { ...options, redisUrl, logger }, stoppable(PLUGINS, stop));
  } catch (error) {
    if (error instanceof StartupStopped) {
      logger.info('stopped during start-up', { signal: error.message });
      return 0;
    }
    // A ConfigError names its file itself (a policy or an MCP server of the config); other
    // errors (a TLS file, Redis) are not about the config file.
    const problem =
      error instanceof ConfigError ? `bad config: ${error.message}`
      : error instanceof ListenFailure ? `cannot start: ${listenProblem(error, options.sources[error.flag.slice(2)] ?? 'the default', error.cause as Error)}`
      : `cannot start: ${(renamed(error, options.sources) as Error).message}`;
    process.stderr.write(`dispatchd: ${problem}\n`);
    return 1;
  }
  let server;
  dropBindFailureLog();
  try {
    server = await app.listen(options.listen);
  } catch (error) {
    const listen = { flag: '--listen', variable: 'DISPATCH_LISTEN', address: options.listen };
    process.stderr.write(`dispatchd: cannot start: ${listenProblem(listen, options.sources.listen ?? 'the default', error as Error)}\n`);
    await app.close(0).catch(() => undefined);
    return 1;
  }
  if (!stop.aborted) {
    const deps = app.deps;
    logger.info('dispatchd serving', { listen: options.listen, port: server.port, tools: deps.registry.list('').length, redis: redisUrl !== undefined, config: configFile });
    await new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
  }
  logger.info('draining', { signal: String(stop.reason), graceMs: options.graceMs });
  await app.close(options.graceMs).catch(() => undefined);
  logger.info('stopped');
  return 0;
}
