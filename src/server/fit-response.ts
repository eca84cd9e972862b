import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { boundFromEnds, boundResult, codePointLength, reboundResult, type PipelineDeps } from '../pipeline';
import { isFullTextNotKeptWarning, newResultHandle, waterLevel, type SessionScope } from '../store';
import { RESPONSE_SLACK_BYTES } from '../options';
import { TOOL_DEFAULTS } from '../options/tool-defaults';
import { fieldSize } from '../wire/sized-writer';
import { compactResults } from './compact-result';
import { fitAtLeast } from './least-result';
import { errorTextsOf } from './least-error';
import { encodedResultSize } from './dispatch-response-codec';

/**
 * Room kept below `max_response_bytes` for what is not counted: the response's own framing (here
 * and for a ReadResult page), and per cut result its warning and flag. The handle a cut result
 * gets is counted apart: it holds the session id (up to 256 code points, ~1.4 KB), and six cut
 * results of a long id took 70,615 bytes of a 65,536-byte message (grpc-js refused to send it).
 */
export const SLACK_BYTES = RESPONSE_SLACK_BYTES;
const PER_CUT_BYTES = 512;

const MARKER_ONLY = /^\n\n\.\.\. \[\d+ characters omitted by dispatch layer\] \.\.\.\n\n$/;

/**
 * The warning on a result cut so that its turn fits in one response, saying what its output holds:
 * `cut to N characters` (the marker's among them), or the marker alone (a result cut to "0
 * characters" held the 55-character marker).
 */
const cutWarning = (output: string, handle: boolean): string =>
  `the result was cut to ${MARKER_ONLY.test(output) ? 'its omission marker alone' : `${codePointLength(output)} characters`} so that the turn's results fit in one response (max_response_bytes)` +
  (handle ? '; read the rest with ReadResult' : '; the rest could not be kept');

/**
 * Whether `result`'s output is all that was kept of its text, so that a cut of it goes under a new
 * handle: not bounded, or cut only by max_tool_output_chars (truncated, with neither a handle nor
 * the warning of a bounded text the store did not keep: that one's output is not its whole text).
 */
const outputIsWhole = (result: ToolResult): boolean => !result.truncated || (result.resultHandle === '' && !result.warnings.some(isFullTextNotKeptWarning));

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
 * A text of `length` code points bounded by `bound` (to a number of code points, marker included)
 * to at most `maxBytes` of UTF-8, and the bound taken.
 */
function boundToBytes(length: number, maxBytes: number, bound: (chars: number) => string): { text: string; chars: number } {
  let chars = Math.min(length - 1, maxBytes);
  for (;;) {
    const bounded = bound(Math.max(0, chars));
    const bytes = Buffer.byteLength(bounded);
    if (bytes <= maxBytes || chars <= 0) return { text: bounded, chars: Math.max(0, chars) };
    chars = Math.min(chars - 1, Math.floor((chars * maxBytes) / bytes));
  }
}

/**
 * The first and last `chars` code points of a spilled text (joined; the whole when shorter) and its
 * length: two pages of the store, not the whole text (up to 8 MiB each, every cut result's at once).
 */
async function readEnds(store: PipelineDeps['store'], tenant: string, handle: string, chars: number): Promise<{ ends: string; total: number } | undefined> {
  const head = await store.readResultPage(tenant, handle, 0, chars);
  if (!head) return undefined;
  const read = codePointLength(head.text);
  if (read >= head.totalChars) return { ends: head.text, total: head.totalChars };
  const tail = await store.readResultPage(tenant, handle, Math.max(read, head.totalChars - chars), chars);
  return tail && { ends: head.text + tail.text, total: head.totalChars };
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
 * bounded too (compact-result.ts). When that still leaves the turn over (many results, each cut
 * one's marker, warning and handle counted), results are cut to their least (least-result.ts),
 * failures last (least-error.ts).
 * Changes `results` in place; returns at once when the turn is far below the limit.
 */
export async function fitResponse(results: ToolResult[], maxBytes: number, deps: Pick<PipelineDeps, 'store' | 'registry' | 'logger'>, scope: SessionScope): Promise<void> {
  let bound = SLACK_BYTES;
  for (const result of results) bound += sizeBound(result);
  if (bound <= maxBytes) return;

  const cuttable = results.map((result) => !result.isError && result.output !== '');
  // A failure's texts before compaction cuts them: its least is cut from them (least-error.ts).
  const errorTexts = results.map((result) => (result.isError ? errorTextsOf(result) : undefined));
  // Read before compaction may cut the warnings it reads.
  const whole = results.map(outputIsWhole);
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
  const spill = (result: ToolResult, whole: string) => spillWhole(result, whole, deps, scope);

  await Promise.all(
    results.map(async (result, i) => {
      if (!cuttable[i] || outputs[i]! <= cap) return;
      // A bounded result's whole text is in the store already; cut from it, not from its cut. If
      // it cannot be read now, its handle still leads to it: the cut is of the bounded text.
      const spilled = result.truncated && result.resultHandle !== '';
      const kept = spilled ? await readEnds(deps.store, scope.tenant, result.resultHandle, Math.ceil(cap)).catch(() => undefined) : undefined;
      const output = result.output;
      const cut = kept
        ? boundToBytes(kept.total, cap, (chars) => boundFromEnds(kept.ends, chars, kept.total))
        : boundToBytes(codePointLength(output), cap, (chars) => (whole[i] ? boundResult(output, chars).text : reboundResult(output, chars)));
      // A bounded result whose whole text the store did not keep has none to read: its bounded text
      // under a new handle would be read as the rest, its middle missing.
      const handle = spilled ? result.resultHandle : whole[i] ? await spill(result, output) : '';
      whole[i] = false;
      result.output = cut.text;
      result.truncated = true;
      result.resultHandle = handle;
      result.warnings = [...result.warnings, cutWarning(cut.text, handle !== '')];
    }),
  );
  // What the shares left can still be over (each cut result's marker, warning and handle count
  // too): the last resort, exact (the response's bytes are what its receivers compare).
  await fitAtLeast(results, maxBytes, Buffer.byteLength(scope.sessionId), spill, { errorTexts, whole });
}

/** Keeps `whole`, the whole output of `result`, under a new handle; '' when the store did not keep it. */
async function spillWhole(result: ToolResult, whole: string, deps: Pick<PipelineDeps, 'store' | 'registry' | 'logger'>, scope: SessionScope): Promise<string> {
  const handle = newResultHandle(scope.sessionId);
  const ttlSeconds = deps.registry.lookup(scope.tenant, result.resolvedToolName)?.idempotencyTtlSeconds ?? TOOL_DEFAULTS.idempotencyTtlSeconds;
  try {
    const step = deps.store.finishAttempt({ scope, op: '', spill: { handle, text: whole, ttlSeconds } });
    // A spill the store had no room for is answered, not thrown: the result then has no handle.
    return (step instanceof Promise ? await step : step).spillRefused ? '' : handle;
  } catch (error) {
    deps.logger.warn('store write of a result cut to fit its response failed; the rest of it is lost', { tool: result.resolvedToolName, error: (error as Error).message });
    return '';
  }
}
