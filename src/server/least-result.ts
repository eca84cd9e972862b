import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { leastMarker, leastResultBytes, leastWarning } from '../options';
import { codePointLength, shortened, wholeChars } from '../pipeline';
import { fieldSize } from '../wire/sized-writer';
import { encodedResultSize } from './dispatch-response-codec';
import { leastError, type ErrorTexts } from './least-error';

/**
 * fit-response's last resort: when its shares still leave the turn's results over
 * max_response_bytes (each cut result carried a 55-character marker, a ~140-character warning and
 * a handle: 128 of them took 31,261 bytes of a 16,384-byte message), results are cut to their least
 * (options/result-floor.ts), largest saving first, until the turn fits. Dispatch admitted the turn
 * only if all of them at their least fit (dispatch-service.ts), so it then does.
 */

/** The longest resolved name a result cut to its least keeps, in UTF-16 units (a registered name's limit). */
export const LEAST_NAME_CHARS = 128;

/** A resolved (or echoed) tool name as a result cut to its least keeps it. */
export const leastName = (name: string): string => shortened(name, LEAST_NAME_CHARS);

/** Whether `warning` is the one fit-response's shares added (it gives way to the least warning). */
export const isShareWarning = (warning: string): boolean => warning.startsWith('the result was cut to ') && warning.includes('(max_response_bytes)');

/** Stores a result's whole output under a new handle; '' when the store could not keep it. */
export type SpillWhole = (result: ToolResult, whole: string) => Promise<string>;

/**
 * Cuts a successful result to its least: the marker alone, a handle to its whole text, one warning.
 * `whole`: its output is all that was kept of its text (fit-response.ts), stored under a new handle.
 */
async function cutToLeast(result: ToolResult, whole: boolean, spill: SpillWhole): Promise<void> {
  // The characters its whole output held: its length when whole, else its marker's count.
  const omitted = whole ? codePointLength(result.output) : wholeChars(result.output);
  const handle = result.resultHandle !== '' || !whole ? result.resultHandle : await spill(result, result.output);
  const others = result.warnings.some((warning) => !isShareWarning(warning));
  result.output = leastMarker(omitted);
  result.truncated = true;
  result.resultHandle = handle;
  result.resolvedToolName = leastName(result.resolvedToolName);
  result.warnings = [leastWarning(handle !== '', others)];
}

/** A result whose output is not cut (a failure, an empty output) keeps one warning saying how many went, and a bounded name. */
function trimRest(result: ToolResult): void {
  result.resolvedToolName = leastName(result.resolvedToolName);
  if (result.warnings.length > 1) result.warnings = [`${result.warnings.length} warnings dropped to fit max_response_bytes`];
}

const sizeOf = (result: ToolResult): number => fieldSize(encodedResultSize(result));

/** Cuts failures to their least (largest saving first) until the turn takes at most `maxBytes`; returns what it then takes. */
function cutErrors(results: ToolResult[], sizes: readonly number[], total: number, maxBytes: number, errorTexts: readonly (ErrorTexts | undefined)[]): number {
  const least = results.map((result, i) => {
    const texts = errorTexts[i];
    return result.isError && texts ? leastError(result, texts, leastName(result.resolvedToolName)) : undefined;
  });
  const saving = (i: number) => sizes[i]! - sizeOf(least[i]!);
  const order = results
    .map((_, i) => ({ i, saved: least[i] ? saving(i) : 0 }))
    .filter((entry) => entry.saved > 0)
    .sort((a, b) => b.saved - a.saved);
  for (const { i, saved } of order) {
    if (total <= maxBytes) break;
    Object.assign(results[i]!, least[i]!);
    total -= saved;
  }
  return total;
}

/** What fit-response read of a turn's results before it cut any, by index. */
export interface BeforeCuts {
  /** A failure's texts (least-error.ts cuts from them; a failure without them is not cut). */
  readonly errorTexts: readonly (ErrorTexts | undefined)[];
  /** Whether a result's output is all that was kept of its text (not cut since). */
  readonly whole: readonly boolean[];
}

/**
 * Cuts `results` to their least, largest saving first, until their response takes at most
 * `maxBytes`: successful ones first (ReadResult keeps their whole text), then failures
 * (least-error.ts). Empty outputs, and failures not cut, have their warnings and names trimmed only
 * if that is still not enough. Changes `results` in place.
 */
export async function fitAtLeast(results: ToolResult[], maxBytes: number, sessionIdBytes: number, spill: SpillWhole, before: BeforeCuts): Promise<void> {
  const sizes = results.map(sizeOf);
  let total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= maxBytes) return;
  const cuttable = (result: ToolResult) => !result.isError && result.output !== '';
  const least = results.map((result, i) =>
    cuttable(result) ? leastResultBytes({ idBytes: Buffer.byteLength(result.toolCallId), nameBytes: Buffer.byteLength(leastName(result.resolvedToolName)), sessionIdBytes }) : sizes[i]!,
  );
  const order = results
    .map((_, i) => i)
    .filter((i) => least[i]! < sizes[i]!)
    .sort((a, b) => sizes[b]! - least[b]! - (sizes[a]! - least[a]!));
  const chosen: number[] = [];
  for (const i of order) {
    if (total <= maxBytes) break;
    chosen.push(i);
    total -= sizes[i]! - least[i]!;
  }
  if (total > maxBytes) total = cutErrors(results, sizes, total, maxBytes, before.errorTexts);
  if (total > maxBytes) for (const result of results) if (!cuttable(result)) trimRest(result);
  await Promise.all(chosen.map((i) => cutToLeast(results[i]!, before.whole[i] ?? !results[i]!.truncated, spill)));
}
