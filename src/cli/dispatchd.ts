import { createLogger, type Logger } from '../log';
import { logLevelFromEnv } from '../log/logger';
import { logStrayRejections } from './stray-rejections';
import { HelpRequested, parseDaemonOptions } from './dispatchd-options';
import { refusedAs, startupFailed, usageProblem } from './startup-failure';
import type * as ServeModule from './dispatchd-serve';
import type * as DiagModule from '../telemetry/diag-logger';

// Nothing heavy above (the type imports are erased): the app, gRPC, OpenTelemetry and ioredis are
// required once the options parse (dispatchd-serve), so --help and a usage error answer in a
// fraction of the time and memory. require, not import(): TypeScript keeps import() as an ES
// import in CommonJS output.

/**
 * Signals that drain and stop dispatchd. SIGHUP too: dispatchd has no reload, and Node's default
 * for it ended the process at once, cutting off the calls in flight (an operator's `kill -HUP 1`
 * expecting a reload, which tini passes on; a closed terminal).
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Runs the daemon until SIGTERM, SIGINT or SIGHUP; resolves with the process exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // First of all: in a container without an init, node is PID 1, and a signal it has no handler
  // for is ignored, so a pod deleted while this starts would wait out its whole grace period.
  // A second signal while stopping (a double Ctrl-C, a supervisor that sends two) leaves the drain
  // to finish: Node's default action would end the process at once, cutting off the calls in
  // flight with their outcome unknown (one could then run twice). SIGKILL stops at once.
  const stop = new AbortController();
  let onRepeat = (signal: NodeJS.Signals): void => createLogger('info').warn(REPEATED_SIGNAL, { signal });
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) onRepeat(signal);
    else stop.abort(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  try {
    return await run(argv, env, stop.signal, (logger) => {
      onRepeat = (signal) => logger.warn(REPEATED_SIGNAL, { signal });
    });
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  }
}

/** Logged when a stop signal comes while dispatchd is already stopping. */
const REPEATED_SIGNAL = 'stop signal again: already stopping; the drain goes on (SIGKILL stops at once)';

async function run(argv: readonly string[], env: NodeJS.ProcessEnv, stop: AbortSignal, logging: (logger: Logger) => void): Promise<number> {
  let logger;
  let options;
  try {
    options = parseDaemonOptions(argv, env);
    logger = createLogger(refusedAs('DISPATCH_LOG_LEVEL', () => logLevelFromEnv(env)));
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${error.message}\n`);
      return 0;
    }
    // JSON as every line of dispatchd's log, in a terminal too: a pod with `tty: true` (or `docker
    // run -t`) has a terminal on stderr, and its log pipeline would get plain text.
    return startupFailed(createLogger('info'), 2, usageProblem(error));
  }
  logging(logger);
  const stopLogging = logStrayRejections(logger);
  let stopDiagnostics = (): void => undefined;
  try {
    const { routeDiagnostics } = require('../telemetry/diag-logger') as typeof DiagModule;
    stopDiagnostics = routeDiagnostics(logger);
    const { serve } = require('./dispatchd-serve') as typeof ServeModule;
    return await serve(options, env, stop, logger);
  } finally {
    stopDiagnostics();
    stopLogging();
  }
}

