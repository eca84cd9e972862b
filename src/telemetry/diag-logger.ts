import { inspect } from 'node:util';
import { diag, DiagLogLevel, type DiagLogFunction } from '@opentelemetry/api';
import { messageShape, throttledWarn, type Logger } from '../log';

/** Each distinct OpenTelemetry warning is logged at most this often. */
const DIAG_INTERVAL_MS = 10_000;

/**
 * Routes OpenTelemetry's own warnings and errors (`diag`: a collector's partial success, a
 * response it cannot read, the metrics SDK's complaints) to `logger` as warnings prefixed
 * `opentelemetry: `, each at most every {@link DIAG_INTERVAL_MS}: texts that differ only in a
 * quoted value, a `key=value`'s value, a number or a hex id are one (messageShape), so a header's
 * value or a request id in the text neither defeats the throttle nor grows it (at most 1,000 kept);
 * its info and debug lines are dropped. `diag` is global, so this is for a process (dispatchd), not a library
 * embedding dispatch. Returns the undo.
 */
export function routeDiagnostics(logger: Logger, intervalMs = DIAG_INTERVAL_MS): () => void {
  const warn = throttledWarn(logger, { intervalMs, keyOf: messageShape });
  const line: DiagLogFunction = (message, ...args) => warn(`opentelemetry: ${message}`, args.length > 0 ? { details: args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 2, breakLength: Infinity }))) } : undefined);
  const none: DiagLogFunction = () => undefined;
  diag.setLogger({ error: line, warn: line, info: none, debug: none, verbose: none }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  return () => diag.disable();
}
