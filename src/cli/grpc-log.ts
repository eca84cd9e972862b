import { format } from 'node:util';
import type * as Grpc from '@grpc/grpc-js';
import type { Logger } from '../log';

/** How grpc-js begins the error it logs itself when no address could be bound. */
const BIND_FAILURE = 'No address added';
/** What grpc-js's trace lines begin with, which the log line's own `time` says: `2026-12-07T03:42:03.397Z | `. */
const TRACE_TIME = /^\d{4}-\d\d-\d\dT[\d:.]+Z \| /;

/**
 * grpc-js's own lines (its errors; and, when GRPC_VERBOSITY or GRPC_TRACE ask for them, its info
 * and trace lines) as lines of dispatchd's log, `component: "grpc-js"`: they were plain text
 * (`D 2026-... | server | ...`), which a log pipeline parsing every line as JSON drops or mangles.
 * Errors at level error; info and trace lines at info, as grpc-js prints them only when asked to.
 * Its "No address added ..." error when the port cannot be bound is left out: dispatchd reports
 * that in one line of its own (listenProblem). grpc-js offers no way to read the logger in place,
 * so this one is set for the whole process.
 */
export function routeGrpcLog(logger: Logger): void {
  const grpc = require('@grpc/grpc-js') as typeof Grpc;
  const text = (args: unknown[]) => format(...args).replace(TRACE_TIME, '');
  grpc.setLogger({
    error: (...args: unknown[]) => {
      const message = text(args);
      if (!message.startsWith(BIND_FAILURE)) logger.error(`grpc-js: ${message}`, { component: 'grpc-js' });
    },
    info: (...args: unknown[]) => logger.info(`grpc-js: ${text(args)}`, { component: 'grpc-js' }),
    debug: (...args: unknown[]) => logger.info(`grpc-js: ${text(args)}`, { component: 'grpc-js', grpcLevel: 'debug' }),
  });
}
