import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { DispatchError } from '../errors';
import type { Middleware, ToolOutput } from '../pipeline';
import { redactSecrets } from './redact-secrets';

const EXCERPT_CHARS = 80;

/** Outputs checked already, and whether they were JSON: memoize checks before it caches, then verification. */
const checked = new WeakMap<ToolOutput, boolean>();

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `output` breaks the `returns_json` contract of its tool. Memoize asks before it caches
 * (a broken answer would fail every identical call from the cache, the tool never reached); the
 * answer is kept for the output object, so that verification, asking next, parses it no more.
 */
export function breaksJsonContract(returnsJson: boolean, output: ToolOutput): boolean {
  if (!returnsJson) return false;
  let json = checked.get(output);
  if (json === undefined) {
    json = isJson(output.text);
    checked.set(output, json);
  }
  return !json;
}

/**
 * Result verification: a tool declared `returns_json` that answers anything but JSON broke its
 * contract, which is UNEXPECTED (after execution, never retried).
 */
export function resultVerification(): Middleware {
  // Tools that do not declare JSON pass straight through: no promise of this stage's own.
  return (next) => (invocation) => {
    const { returnsJson, skipRedaction } = invocation.tool.spec;
    return returnsJson ? next(invocation).then((output) => verifyJson(output, !skipRedaction)) : next(invocation);
  };
}

function verifyJson(output: ToolOutput, redact: boolean): ToolOutput {
  if (!breaksJsonContract(true, output)) return output;
  // Redacted before it is quoted: JSON.stringify escapes its quotes (\"), which the outer
  // redaction of the message saw as ending a value. Cut after redaction, so no secret is cut short.
  const start = output.text.slice(0, EXCERPT_CHARS * 4);
  const redacted = redact ? redactSecrets(start) : start;
  const cut = redacted.length > EXCERPT_CHARS || output.text.length > EXCERPT_CHARS * 4;
  const excerpt = cut ? `${redacted.slice(0, EXCERPT_CHARS)}...` : redacted;
  throw new DispatchError(ErrorKind.UNEXPECTED, `the tool is declared to return JSON but answered text that is not JSON: ${JSON.stringify(excerpt)}`, {
    phase: 'after',
    suggestion: 'The tool broke its contract; do not repeat the same call. Tell the user or use another tool.',
  });
}
