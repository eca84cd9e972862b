import { join } from 'node:path';
import { buildApp } from '../app';
import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../log';
import { projectRoot } from '../server';
import { isLoopback, parseDaemonOptions } from './dispatchd-options';

/** Runs the daemon until SIGTERM or SIGINT; resolves with the process exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const logger = createLogger();
  let options;
  try {
    options = parseDaemonOptions(argv, env);
  } catch (error) {
    process.stderr.write(`dispatchd: ${(error as Error).message}\n`);
    return 2;
  }
  const configFile = options.configFile ?? join(projectRoot(), 'examples', 'tools.yaml');
  let config;
  try {
    config = loadConfig(configFile);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`dispatchd: bad config: ${error.message}\n`);
    return 1;
  }
  const authConfigured = config.auth.tokens.length > 0 || config.auth.tokensFile !== undefined || env.DISPATCH_AUTH_TOKENS_FILE !== undefined || (config.auth.mtlsTenantFrom !== undefined && options.tls?.ca !== undefined);
  if (!isLoopback(options.listen) && !authConfigured && !options.insecure) {
    process.stderr.write(`dispatchd: refusing to listen on ${options.listen} without authentication; configure auth tokens or pass --insecure\n`);
    return 1;
  }
  let app;
  try {
    app = await buildApp(config, { ...options, redisUrl: options.redisUrl ?? config.redisUrl, logger });
  } catch (error) {
    process.stderr.write(`dispatchd: cannot start: ${configFile}: ${(error as Error).message}\n`);
    return 1;
  }
  const server = await app.listen(options.listen);
  const deps = app.deps;
  logger.info('dispatchd serving', { listen: options.listen, port: server.port, tools: deps.registry.list('').length, redis: (options.redisUrl ?? config.redisUrl) !== undefined, config: configFile });
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      logger.info('draining', { signal: sig, graceMs: options.graceMs });
      app.close(options.graceMs).then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  logger.info('stopped');
  return 0;
}
