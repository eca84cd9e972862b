import { toBinary } from '@bufbuild/protobuf';
import { DispatchResponseSchema, type DispatchResponse, type ToolError, type ToolResult } from '../../gen/dispatch/v1/dispatch_pb';
import { fieldSize, isUint32, stringSize, uintSize, Writer } from '../wire/sized-writer';

// The one message dispatch writes per Dispatch RPC, encoded by hand: protobuf-es's reflective
// toBinary (BinaryWriter, a TextEncoder call and a chunk per string) measured ~15x slower than
// sizing the message, allocating one Buffer and writing into it, which is several percent of the
// server's CPU per call. Field numbers are those of proto/dispatch/v1/dispatch.proto;
// test/unit/dispatch-response-codec.test.ts checks the bytes against toBinary for arbitrary
// messages, so a field added to the proto and not here fails CI.

/** Wire tags: field number << 3 | wire type (0 varint, 2 length-delimited). */
const TAG = {
  results: (1 << 3) | 2,
  toolCallId: (1 << 3) | 2,
  output: (2 << 3) | 2,
  isError: (3 << 3) | 0,
  error: (4 << 3) | 2,
  attempts: (5 << 3) | 0,
  durationMs: (6 << 3) | 0,
  resolvedToolName: (7 << 3) | 2,
  truncated: (8 << 3) | 0,
  resultHandle: (9 << 3) | 2,
  idempotentReplay: (10 << 3) | 0,
  cached: (11 << 3) | 0,
  warnings: (12 << 3) | 2,
  errorKind: (1 << 3) | 0,
  errorMessage: (2 << 3) | 2,
  errorRecoverable: (3 << 3) | 0,
  errorSuggestion: (4 << 3) | 2,
  errorRetryAfterMs: (5 << 3) | 0,
} as const;

function errorSize(error: ToolError): number {
  return uintSize(error.kind) + stringSize(error.message) + (error.recoverable ? 2 : 0) + stringSize(error.suggestion) + uintSize(error.retryAfterMs);
}

/** Bytes of a result's encoding, without its field tag and length in the response. */
export function encodedResultSize(result: ToolResult): number {
  let size = stringSize(result.toolCallId) + stringSize(result.output) + (result.isError ? 2 : 0);
  if (result.error) size += fieldSize(errorSize(result.error));
  size += uintSize(result.attempts) + uintSize(result.durationMs) + stringSize(result.resolvedToolName) + (result.truncated ? 2 : 0);
  size += stringSize(result.resultHandle) + (result.idempotentReplay ? 2 : 0) + (result.cached ? 2 : 0);
  for (const warning of result.warnings) size += fieldSize(Buffer.byteLength(warning));
  return size;
}

/** True when every number fits its field: anything else goes to toBinary, which reports it. */
function encodable(result: ToolResult): boolean {
  const error = result.error;
  return isUint32(result.attempts) && isUint32(result.durationMs) && (!error || (isUint32(error.kind) && error.kind < 2 ** 31 && isUint32(error.retryAfterMs)));
}

function writeError(w: Writer, error: ToolError): void {
  w.uint(TAG.errorKind, error.kind);
  w.string(TAG.errorMessage, error.message);
  w.flag(TAG.errorRecoverable, error.recoverable);
  w.string(TAG.errorSuggestion, error.suggestion);
  w.uint(TAG.errorRetryAfterMs, error.retryAfterMs);
}

function writeResult(w: Writer, result: ToolResult): void {
  w.string(TAG.toolCallId, result.toolCallId);
  w.string(TAG.output, result.output);
  w.flag(TAG.isError, result.isError);
  if (result.error) {
    w.nested(TAG.error, errorSize(result.error));
    writeError(w, result.error);
  }
  w.uint(TAG.attempts, result.attempts);
  w.uint(TAG.durationMs, result.durationMs);
  w.string(TAG.resolvedToolName, result.resolvedToolName);
  w.flag(TAG.truncated, result.truncated);
  w.string(TAG.resultHandle, result.resultHandle);
  w.flag(TAG.idempotentReplay, result.idempotentReplay);
  w.flag(TAG.cached, result.cached);
  for (const warning of result.warnings) w.string(TAG.warnings, warning, true);
}

/** The protobuf encoding of a DispatchResponse, the same bytes as protobuf-es's toBinary. */
export function encodeDispatchResponse(response: DispatchResponse): Buffer {
  const results = response.results;
  if (!results.every(encodable)) return Buffer.from(toBinary(DispatchResponseSchema, response));
  const sizes = results.map(encodedResultSize);
  let total = 0;
  for (const size of sizes) total += fieldSize(size);
  const w = new Writer(Buffer.allocUnsafe(total));
  for (let i = 0; i < results.length; i++) {
    w.nested(TAG.results, sizes[i]!);
    writeResult(w, results[i]!);
  }
  return w.buf;
}
