import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, kindName } from './dispatch-error';
import { suggestionFor } from './suggestions';

/** The error object a model reads in a failed result's `output`. */
export interface ErrorJson {
  readonly error: true;
  readonly tool: string;
  readonly kind: string;
  readonly message: string;
  readonly recoverable: boolean;
  readonly attempts: number;
  readonly retried: boolean;
  readonly suggestion: string;
  readonly retry_after_ms?: number;
}

/** Builds the error JSON of DESIGN section 2 for a failure of `tool` after `attempts`. */
export function toErrorJson(tool: string, error: DispatchError, attempts: number): ErrorJson {
  const json: ErrorJson = {
    error: true,
    tool,
    kind: kindName(error.kind),
    message: error.message,
    recoverable: error.recoverable,
    attempts,
    retried: attempts > 1,
    suggestion: error.suggestion ?? suggestionFor(error.kind),
  };
  return error.retryAfterMs === undefined ? json : { ...json, retry_after_ms: error.retryAfterMs };
}

/** Shorthand constructors for the failures the pipeline itself produces. */
export const errors = {
  unknownTool: (message: string, suggestion?: string) =>
    new DispatchError(ErrorKind.UNKNOWN_TOOL, message, { phase: 'before', suggestion }),
  invalidArguments: (message: string, suggestion?: string) =>
    new DispatchError(ErrorKind.INVALID_ARGUMENTS, message, { phase: 'before', suggestion }),
  blocked: (message: string) => new DispatchError(ErrorKind.BLOCKED, message, { phase: 'before' }),
  cancelled: () =>
    new DispatchError(ErrorKind.CANCELLED, 'the call was cancelled by the client', { phase: 'during' }),
} as const;
