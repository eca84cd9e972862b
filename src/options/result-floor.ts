import { fieldSize } from '../wire/sized-writer';

/**
 * The least a turn's result can be cut to so that the turn fits in max_response_bytes (the last
 * resort of src/server/fit-response.ts), and the bytes such a result takes: what a Dispatch turn is
 * checked against before any of its calls runs, and max_response_bytes against max_calls_per_turn
 * at start. Each cut result keeps its id, its resolved tool name, a handle to its whole text and
 * one warning, and nothing can cut those: 128 results of ~244 bytes each (the 55-character
 * marker, a 140-character warning) took 31,261 bytes of a 16,384-byte message, after every call ran.
 */

/** The output of a result cut to its least: the marker alone, counting the characters it left out. */
export const leastMarker = (omitted: number): string => `[${omitted} characters omitted]`;

/** The one warning of a result cut to its least (its other warnings, if any, left out). */
export const leastWarning = (handle: boolean, others: boolean): string =>
  `cut to fit max_response_bytes${others ? ' (other warnings dropped)' : ''}; ${handle ? 'ReadResult has the rest' : 'the rest was not kept'}`;

/** The longest leastMarker: a 32-bit count of characters. */
const MARKER_BYTES = Buffer.byteLength(leastMarker(2 ** 32 - 1));
const WARNING_BYTES = Math.max(...[true, false].flatMap((handle) => [true, false].map((others) => Buffer.byteLength(leastWarning(handle, others)))));
/** truncated, idempotent_replay and cached (2 bytes each), attempts and duration_ms (32-bit varints, up to 6 bytes each). */
const FLAG_AND_NUMBER_BYTES = 3 * 2 + 2 * 6;

/** The length of a result handle of a session of `sessionIdBytes` bytes (store/result-handle.ts: `rh_`, base64url, `.`, 16). */
export const handleLength = (sessionIdBytes: number): number => 3 + Math.ceil((sessionIdBytes * 4) / 3) + 1 + 16;

/** Room kept below max_response_bytes for the response's own framing (see fit-response.ts). */
export const RESPONSE_SLACK_BYTES = 1024;

/** The parts of a result that cutting cannot shorten, by their lengths in bytes of UTF-8. */
export interface ResultFloorParts {
  readonly idBytes: number;
  readonly nameBytes: number;
  readonly sessionIdBytes: number;
}

const stringOf = (bytes: number): number => (bytes === 0 ? 0 : fieldSize(bytes));

/**
 * Bytes one result takes in a DispatchResponse cut to its least: its id, its resolved tool name,
 * its flags and numbers, the marker alone as its output, a handle and the one warning, and the
 * field framing them.
 */
export function leastResultBytes(parts: ResultFloorParts): number {
  const body = stringOf(parts.idBytes) + stringOf(parts.nameBytes) + FLAG_AND_NUMBER_BYTES + stringOf(MARKER_BYTES) + stringOf(handleLength(parts.sessionIdBytes)) + stringOf(WARNING_BYTES);
  return fieldSize(body);
}

/**
 * The ids the start-up check of max_response_bytes assumes: call ids as models mint them (OpenAI's
 * `call_` and 24 characters, Anthropic's `toolu_` and 24), a UUID session id, a 24-character tool name.
 */
export const TYPICAL_PARTS: ResultFloorParts = Object.freeze({ idBytes: 30, nameBytes: 24, sessionIdBytes: 36 });

/** The least max_response_bytes that lets `calls` results of typical ids fit at their least. */
export const leastResponseBytes = (calls: number): number => RESPONSE_SLACK_BYTES + calls * leastResultBytes(TYPICAL_PARTS);
