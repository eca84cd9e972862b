import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { kindName, serverTrouble } from '../errors';
import { canonicalJson } from '../json';
import { retryTreeReflector, type Failure, type Reflection, type Reflector } from '../pipeline';

/** Proposes fixed arguments for a failure, or undefined to leave it. */
export type ArgumentFixer = (failure: Failure) => unknown | Promise<unknown>;

/** Options of {@link createRecoveryReflector}. */
export interface RecoveryOptions {
  /** The decision taken first. @default the retry decision tree */
  readonly base?: Reflector;
  /** Asked when neither a retry nor a fallback applies. @default none */
  readonly fixArguments?: ArgumentFixer;
}

/**
 * The tool named by `fallback_tool`, when the failure is one another tool could fix: the tool was
 * unreachable, its breaker is open, a read-only tool timed out or answered 5xx. A side-effecting
 * tool falls back only from failures before it ran, so nothing is done twice. The pipeline follows
 * it only to a tool the call has not run on yet and that was offered in the turn (see
 * applyCorrection), so a cycle of fallbacks ends with the last error instead of recovery giving up.
 */
export function fallbackFor({ tool, error }: Failure): string | undefined {
  const fallback = tool.spec.fallbackTool;
  if (fallback === '' || fallback === tool.name) return undefined;
  if (!tool.readOnly && error.phase !== 'before') return undefined;
  switch (error.kind) {
    case ErrorKind.UNAVAILABLE:
    case ErrorKind.BREAKER_OPEN:
      return fallback;
    case ErrorKind.TIMEOUT:
      return tool.readOnly ? fallback : undefined;
    case ErrorKind.TOOL_ERROR:
      return error.httpStatus !== undefined && serverTrouble(error.httpStatus) ? fallback : undefined;
    default:
      return undefined;
  }
}

/**
 * The default reflector: the retry decision tree first (a transient failure retries the same tool
 * with backoff); when it gives up, the ToolSpec's `fallback_tool` for a failure a fallback could
 * fix; then fixed arguments from `fixArguments`, when they differ. The pipeline re-runs the whole
 * attempt with a correction and holds the ceiling of five attempts.
 */
export function createRecoveryReflector(options: RecoveryOptions = {}): Reflector {
  const base = options.base ?? retryTreeReflector;
  return {
    async reflect(failure): Promise<Reflection> {
      const decision = await base.reflect(failure);
      if (decision.retry) return decision;
      const fallback = fallbackFor(failure);
      if (fallback !== undefined) {
        const why = kindName(failure.error.kind);
        return { retry: true, delayMs: 0, reason: `falling back to "${fallback}" after ${why}`, correction: { tool: fallback, note: `"${failure.tool.name}" failed with ${why}` } };
      }
      if (options.fixArguments) {
        const fixed = await options.fixArguments(failure);
        if (fixed !== undefined && canonicalJson(fixed) !== canonicalJson(failure.args)) {
          return { retry: true, delayMs: 0, reason: 'retrying with corrected arguments', correction: { arguments: fixed, note: `after ${kindName(failure.error.kind)}` } };
        }
      }
      return decision;
    },
  };
}
