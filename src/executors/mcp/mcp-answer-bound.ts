/**
 * Largest answer read from a Streamable HTTP MCP server, in bytes, by default: as large as a tool's
 * output may be (limits.max_tool_output_chars' default, 16 Mi characters, at most 4 bytes each),
 * the bound of an HTTP tool's answer and of a stdio server's message.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/**
 * A counter of an answer's bytes, told each chunk as it is read; true once past `maxBytes`. A
 * JSON answer counts whole; an SSE stream (`sse`) counts each event, from the blank line ending
 * the one before it, as the stream may stay open for any number of them.
 */
export function createAnswerCounter(sse: boolean, maxBytes: number): (chunk: Uint8Array) => boolean {
  let bytes = 0;
  if (!sse) return (chunk) => (bytes += chunk.length) > maxBytes;
  // Lines end with CRLF, LF or CR; an event ends with an empty line.
  let atLineStart = true;
  let afterCR = false;
  return (chunk) => {
    if (chunk.length === 0) return false;
    if (chunk.indexOf(LF) === -1 && chunk.indexOf(CR) === -1) {
      atLineStart = afterCR = false;
      return (bytes += chunk.length) > maxBytes;
    }
    for (const byte of chunk) {
      if (byte === LF && afterCR) {
        afterCR = false;
        // The LF of a CRLF: part of the line its CR ended, or of nothing when that ended the event.
        if (bytes === 0) continue;
      } else {
        afterCR = byte === CR;
        if (byte !== LF && byte !== CR) atLineStart = false;
        else if (atLineStart) {
          bytes = 0;
          continue;
        } else atLineStart = true;
      }
      if (++bytes > maxBytes) return true;
    }
    return false;
  };
}
