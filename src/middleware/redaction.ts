import { DispatchError, HardError } from '../errors';
import type { Middleware, ToolOutput } from '../pipeline';
import { redactSecrets, type RedactionOptions } from './redact-secrets';

/**
 * `error` with the secrets of its message replaced. Any Error, not only a DispatchError: the
 * pipeline answers another as UNEXPECTED, "the tool crashed: <its message>" (an embedder's
 * built-in, or a library it calls, quoting a connection string). Such an error is replaced by a
 * plain Error of the redacted message, without the original (its cause would quote the secret).
 * A HardError (dispatch's own, ending the turn) is kept as it is: as a plain Error it would end
 * only its call.
 */
function redactError(error: unknown, options: RedactionOptions): unknown {
  if (!(error instanceof Error) || error instanceof HardError) return error;
  const message = redactSecrets(error.message, options);
  if (message === error.message) return error;
  if (!(error instanceof DispatchError)) return new Error(message);
  return error.retold(message, { cause: error.cause });
}

/**
 * Secret redaction of outputs (outermost middleware): the tool's text, its warnings and the
 * message of an error it answered (which quotes the tool's body) reach the model, the events and
 * the memory with every secret replaced by `[REDACTED:kind]`. A tool declared `skip_redaction`
 * passes through as it answered.
 */
export function redaction(options: RedactionOptions = {}): Middleware {
  const redactOutput = (output: ToolOutput): ToolOutput => {
    const text = redactSecrets(output.text, options);
    const warnings = output.warnings?.map((w) => redactSecrets(w, options));
    return text === output.text && warnings === undefined ? output : { ...output, text, warnings };
  };
  const redactFailure = (error: unknown): never => {
    throw redactError(error, options);
  };
  return (next) => (invocation) => {
    if (invocation.tool.spec.skipRedaction) return next(invocation);
    let pending: Promise<ToolOutput>;
    try {
      pending = next(invocation);
    } catch (error) {
      return Promise.reject(redactError(error, options));
    }
    return pending.then(redactOutput, redactFailure);
  };
}
