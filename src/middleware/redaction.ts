import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError, HardError, MAX_ERROR_MESSAGE_CHARS, suggestionFor } from '../errors';
import type { Invocation, Middleware, ToolOutput } from '../pipeline';
import { omission } from '../pipeline/bound-error';
import { codePointLength, sliceCodePoints } from '../pipeline/bound-result';
import { redactSecrets, type RedactionOptions } from './redact-secrets';
import { createRedactionWorker, type RedactionWorker } from './redaction-worker';

/**
 * The most characters (an output's text and warnings together, or an error's message) redacted on
 * the event loop; longer ones are redacted in the redaction worker. The slowest hostile text takes
 * ~1.1 µs a character (`pwd="a" ` repeated: 290 ms for 256 KiB), so at most ~36 ms of stall here;
 * handing a text of this size to the worker and back costs ~0.3 ms.
 */
export const INLINE_REDACTION_CHARS = 32 * 1024;

/** Characters redacted past a long text's cut, where the cut may split a secret (a private key's PEM block is ~3,200 characters): here a message's, and an approval's (approval-request.ts). */
export const SPLIT_TAIL_CHARS = 8_000;

/**
 * A message redacted. One past {@link INLINE_REDACTION_CHARS} (an MCP server's JSON-RPC error, a
 * built-in's) is held here to the bound the call keeps it to (MAX_ERROR_MESSAGE_CHARS, its marker
 * counting the whole: bound-failure.ts keeps it so), its head redacted with
 * {@link SPLIT_TAIL_CHARS} more, so that a secret the cut splits is seen whole; nothing the call
 * kept is lost, and the event loop redacts at most ~24,000 characters.
 */
function redactMessage(message: string, options: RedactionOptions): string {
  if (message.length <= INLINE_REDACTION_CHARS) return redactSecrets(message, options);
  const head = redactSecrets(sliceCodePoints(message, 0, MAX_ERROR_MESSAGE_CHARS + SPLIT_TAIL_CHARS), options);
  return Buffer.from(sliceCodePoints(head, 0, MAX_ERROR_MESSAGE_CHARS) + omission(codePointLength(message) - MAX_ERROR_MESSAGE_CHARS), 'utf16le').toString('utf16le');
}

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
  const message = redactMessage(error.message, options);
  if (message === error.message) return error;
  if (!(error instanceof DispatchError)) return new Error(message);
  return error.retold(message, { cause: error.cause });
}

/**
 * The failure of a call whose output the worker did not redact (it crashed, took too long, was
 * closed, or a read-only call's time ran out while the output waited; a side-effecting call's is
 * kept and recorded, redaction-worker.ts): its text is withheld, never sent
 * unredacted. UNEXPECTED after execution, as a broken `returns_json` contract: never retried (the
 * tool ran), a side-effecting call's record keeps it (the same call is replayed, not run again; a
 * TIMEOUT or UNAVAILABLE during would have been recorded OUTCOME_UNKNOWN, CANCELLED not at all),
 * and not counted against the tool's breaker (notTheTool: dispatch's trouble, not the tool's).
 */
function withheld(failure: unknown, output: ToolOutput, invocation: Invocation): DispatchError {
  const why = failure instanceof Error ? failure.message : String(failure);
  const { readOnly } = invocation.tool;
  return new DispatchError(ErrorKind.UNEXPECTED, `the tool answered ${output.text.length} characters, which were not redacted (${why}); the answer is withheld`, {
    phase: 'after',
    notTheTool: true,
    cause: failure,
    suggestion: readOnly ? 'Ask for less at once (a narrower query, fewer items or a smaller page), or use another tool.' : suggestionFor(ErrorKind.UNEXPECTED, { phase: 'after', readOnly }),
  });
}

/** Characters of an output's text and warnings together (no iterator: it runs for every output). */
function outputChars(output: ToolOutput): number {
  let chars = output.text.length;
  const warnings = output.warnings;
  if (warnings !== undefined) for (let i = 0; i < warnings.length; i++) chars += warnings[i]!.length;
  return chars;
}

/**
 * Secret redaction of outputs (outermost middleware): the tool's text, its warnings and the
 * message of an error it answered (which quotes the tool's body) reach the model, the events and
 * the memory with every secret replaced by `[REDACTED:kind]`. A tool declared `skip_redaction`
 * passes through as it answered. An output past {@link INLINE_REDACTION_CHARS} is redacted in
 * `worker` (the same function and options, off the event loop, tenants in turn); one it cannot
 * redact fails its call, its text withheld (never sent unredacted).
 */
export function redaction(options: RedactionOptions = {}, worker: RedactionWorker = createRedactionWorker(options)): Middleware {
  const redactHere = (output: ToolOutput): ToolOutput => {
    const text = redactSecrets(output.text, options);
    const warnings = output.warnings?.map((w) => redactSecrets(w, options));
    return text === output.text && warnings === undefined ? output : { ...output, text, warnings };
  };
  const redactThere = (output: ToolOutput, invocation: Invocation): Promise<ToolOutput> =>
    worker.redact([output.text, ...(output.warnings ?? [])], invocation.ctx, !invocation.tool.readOnly).then(
      ([text = '', ...warnings]) => (text === output.text && output.warnings === undefined ? output : { ...output, text, warnings: output.warnings && warnings }),
      (failure: unknown) => Promise.reject(withheld(failure, output, invocation)),
    );
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
    return pending.then((output) => (outputChars(output) <= INLINE_REDACTION_CHARS ? redactHere(output) : redactThere(output, invocation)), redactFailure);
  };
}
