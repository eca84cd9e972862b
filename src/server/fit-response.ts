import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { boundResult, codePointLength, reboundResult, type PipelineDeps } from '../pipeline';
import { newResultHandle, waterLevel, type SessionScope } from '../store';
import { TOOL_DEFAULTS } from '../options/tool-defaults';
import { fieldSize } from '../wire/sized-writer';
import { compactResults } from './compact-result';
import { encodedResultSize } from './dispatch-response-codec';

/**
 * Room kept below `max_response_bytes` for what is not counted: the response's own framing (here
 * and for a ReadResult page), and per cut result its warning and flag. The handle a cut result
 * gets is counted apart: it holds the session id (up to 256 code points, ~1.4 KB), and six cut
 * results of a long id took 70,615 bytes of a 65,536-byte message (grpc-js refused to send it).
 */
export const SLACK_BYTES = 1024;
const PER_CUT_BYTES = 512;

/** The warning on a result cut so that its turn fits in one response. */
const cutWarning = (chars: number, handle: boolean): string =>
  `the result was cut to ${chars} characters so that the turn's results fit in one response (max_response_bytes)` +
  (handle ? '; read the rest with ReadResult' : '; the rest could not be kept');

/**
 * Upper bound of a result's encoded size, from string lengths alone (a UTF-16 unit is at most 3
 * bytes of UTF-8: a 4-byte code point is two units): the hot path's check, O(fields).
 */
function sizeBound(result: ToolResult): number {
  let units = result.toolCallId.length + result.output.length + result.resolvedToolName.length + result.resultHandle.length;
  if (result.error) units += result.error.message.length + result.error.suggestion.length;
  for (const warning of result.warnings) units += warning.length;
  return 3 * units + 64 + 8 * result.warnings.length;
}

/**
 * `text` bounded to at most `maxBytes` of UTF-8 (marker included), in code points; `rebound` when
 * `text` is itself a bounded text whose whole is not at hand (its marker then counts the whole's).
 */
function boundToBytes(text: string, maxBytes: number, rebound: boolean): { text: string; chars: number } {
  let chars = Math.min(codePointLength(text) - 1, maxBytes);
  for (;;) {
    const bounded = rebound ? reboundResult(text, Math.max(0, chars)) : boundResult(text, Math.max(0, chars)).text;
    const bytes = Buffer.byteLength(bounded);
    if (bytes <= maxBytes || chars <= 0) return { text: bounded, chars: Math.max(0, chars) };
    chars = Math.min(chars - 1, Math.floor((chars * maxBytes) / bytes));
  }
}

/**
 * Makes a turn's results fit in one gRPC message of `maxBytes` (limits.max_response_bytes): past
 * it, the client refuses to receive the response (grpc-js here to send it, past max_message_bytes),
 * RESOURCE_EXHAUSTED after every call of the turn ran, side effects included, and the caller would
 * get none of their results. Each calls' output is already bounded by its
 * tool's `max_result_chars`, but a turn of many calls, or a tool with a large bound, can add up to
 * more. The largest outputs are cut (head and tail kept, as bounding does) to an equal share of
 * what the others leave; the whole text goes to ReadResult as a bounded result's does, under a new
 * handle unless it has one already. Errors (whose outputs their sources bound) are not cut so; when
 * the parts outputs leave would take half the message, warnings, error texts and echoed names are
 * bounded too (compact-result.ts).
 * Changes `results` in place; returns at once when the turn is far below the limit.
 */
export async function fitResponse(results: ToolResult[], maxBytes: number, deps: Pick<PipelineDeps, 'store' | 'registry' | 'logger'>, scope: SessionScope): Promise<void> {
  let bound = SLACK_BYTES;
  for (const result of results) bound += sizeBound(result);
  if (bound <= maxBytes) return;

  const cuttable = results.map((result) => !result.isError && result.output !== '');
  const outputs = results.map((result, i) => (cuttable[i] ? Buffer.byteLength(result.output) : 0));
  // Every new handle of the turn is as long (its session's id, then 16 characters).
  const handleBytes = fieldSize(Buffer.byteLength(newResultHandle(scope.sessionId)));
  const cutBytes = (result: ToolResult) => PER_CUT_BYTES + (result.resultHandle === '' ? handleBytes : 0);
  const fixedBytes = () => results.reduce((sum, result, i) => sum + fieldSize(encodedResultSize(result)) - outputs[i]! + (cuttable[i] ? cutBytes(result) : 0), SLACK_BYTES);
  let fixed = fixedBytes();
  // What cutting outputs leaves would not fit alone (thousands of warnings, error texts, names
  // echoed back): bound those parts too.
  if (fixed > maxBytes / 2) {
    compactResults(results, maxBytes, maxBytes / 2, fixedBytes);
    fixed = fixedBytes();
  }
  // The largest output size that lets every result fit when each output over it is cut to it.
  const cap = waterLevel(outputs.filter((_, i) => cuttable[i]), Math.max(0, maxBytes - fixed));
  if (cap === Infinity) return;

  await Promise.all(
    results.map(async (result, i) => {
      if (!cuttable[i] || outputs[i]! <= cap) return;
      // A bounded result's whole text is in the store already; cut from it, not from its cut. If
      // it cannot be read now, its handle still leads to it: the cut is of the bounded text.
      const spilled = result.truncated && result.resultHandle !== '';
      const kept = spilled ? await deps.store.readResult(scope.tenant, result.resultHandle).catch(() => undefined) : undefined;
      const whole = kept ?? result.output;
      const cut = boundToBytes(whole, cap, result.truncated && kept === undefined);
      let handle = spilled ? result.resultHandle : '';
      // A bounded result whose whole text the store did not keep has none to read: its bounded text
      // under a new handle would be read as the rest, its middle missing.
      if (handle === '' && !result.truncated) {
        handle = newResultHandle(scope.sessionId);
        const ttlSeconds = deps.registry.lookup(scope.tenant, result.resolvedToolName)?.idempotencyTtlSeconds ?? TOOL_DEFAULTS.idempotencyTtlSeconds;
        try {
          const step = deps.store.finishAttempt({ scope, op: '', spill: { handle, text: whole, ttlSeconds } });
          // A spill the store had no room for is answered, not thrown: the result then has no handle.
          if ((step instanceof Promise ? await step : step).spillRefused) handle = '';
        } catch (error) {
          deps.logger.warn('store write of a result cut to fit its response failed; the rest of it is lost', { tool: result.resolvedToolName, error: (error as Error).message });
          handle = '';
        }
      }
      result.output = cut.text;
      result.truncated = true;
      result.resultHandle = handle;
      result.warnings = [...result.warnings, cutWarning(cut.chars, handle !== '')];
    }),
  );
}
