import type { ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { leastMarker, leastResultBytes, leastWarning } from '../options';
import { codePointLength, shortened, wholeChars } from '../pipeline';
import { fieldSize } from '../wire/sized-writer';
import { encodedResultSize } from './dispatch-response-codec';

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

/** Cuts a successful result to its least: the marker alone, a handle to its whole text, one warning. */
async function cutToLeast(result: ToolResult, spill: SpillWhole): Promise<void> {
  // The characters its whole output held: its marker's count when bounded, else its length.
  const omitted = result.truncated ? wholeChars(result.output) : codePointLength(result.output);
  const handle = result.resultHandle !== '' || result.truncated ? result.resultHandle : await spill(result, result.output);
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

/**
 * Cuts `results` to their least, largest saving first, until their response takes at most
 * `maxBytes`; results that are not cut (failures, empty outputs) have their warnings and names
 * trimmed only if that is still not enough. Changes `results` in place.
 */
export async function fitAtLeast(results: ToolResult[], maxBytes: number, sessionIdBytes: number, spill: SpillWhole): Promise<void> {
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
  if (total > maxBytes) for (const result of results) if (!cuttable(result)) trimRest(result);
  await Promise.all(chosen.map((i) => cutToLeast(results[i]!, spill)));
}
