import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Stream } from 'node:stream';

const LF = 0x0a;

/**
 * Splits a stdio server's output into its messages (one JSON text a line) at a cost linear in its
 * size, in place of the SDK's ReadBuffer, whose interface it has (append, readMessage, clear).
 * The SDK's concatenates its whole buffer with each chunk (64 KiB from a pipe) and scans it all
 * again for a newline: a 60 MiB message took 26 s of CPU to read, the event loop stalled up to
 * 556 ms at a time. Here the chunks are kept in a list, each is scanned once, and a message's are
 * joined once, when its newline has come.
 *
 * As the SDK's: what is held (a message under way, and what follows it) is bounded at `maxBytes`;
 * a chunk past it clears the buffer and throws the SDK's error, which makes the SDK close the
 * connection. A line is taken before it is parsed, so a line that is not a message is dropped
 * (the SDK reports it) and the next one read.
 */
export class LineBuffer {
  private chunks: Buffer[] = [];
  /** How many of `chunks`, from the first, were scanned and hold no newline. */
  private scanned = 0;
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  append(chunk: Buffer): void {
    if (this.bytes + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  readMessage(): JSONRPCMessage | null {
    for (; this.scanned < this.chunks.length; this.scanned++) {
      const chunk = this.chunks[this.scanned]!;
      const end = chunk.indexOf(LF);
      if (end === -1) continue;
      const parts = this.chunks.slice(0, this.scanned);
      parts.push(chunk.subarray(0, end));
      const rest = chunk.subarray(end + 1);
      this.chunks = rest.length > 0 ? [rest, ...this.chunks.slice(this.scanned + 1)] : this.chunks.slice(this.scanned + 1);
      this.scanned = 0;
      const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      this.bytes -= line.length + 1;
      return deserializeMessage(line.toString('utf8').replace(/\r$/, ''));
    }
    return null;
  }

  clear(): void {
    this.chunks = [];
    this.scanned = 0;
    this.bytes = 0;
  }
}

/**
 * Gives `transport` a LineBuffer of `maxBytes` in place of its ReadBuffer (the private field
 * `_readBuffer` its stdout handler appends to and reads messages from, @modelcontextprotocol/sdk
 * 1.x). Answers whether it did: a transport without that field keeps its own buffer (slower, as
 * bounded). test/mcp/mcp-stdio-reads.test.ts pins that the SDK has the field and reads through it.
 */
export function useLineBuffer(transport: StdioClientTransport, maxBytes: number): boolean {
  const fields = transport as unknown as { _readBuffer?: Partial<LineBuffer> };
  const current = fields._readBuffer;
  if (typeof current?.append !== 'function' || typeof current.readMessage !== 'function' || typeof current.clear !== 'function') return false;
  fields._readBuffer = new LineBuffer(maxBytes);
  return true;
}

/**
 * Bytes of a stdio server's stderr read a second, on average (~10,000 log lines). Read as fast as
 * the server wrote it, a server writing its stderr in a loop (a crash loop's traces, a debug log in
 * a tight loop) took ~40-50% of a core of dispatch (~700 MB/s from a pipe) for as long as it went
 * on, unbounded where its stdout messages are bounded (mcp-message-rate). Past it, the stream is
 * paused: the pipe fills and the server's writes wait, as they do on a terminal that scrolls
 * slowly. At this rate reading and logging it costs ~1% of a core.
 */
export const MAX_STDERR_BYTES_PER_SECOND = 1024 * 1024;
/** Bytes of stderr read at once over MAX_STDERR_BYTES_PER_SECOND (a large trace, a dump at start-up). */
export const MAX_STDERR_BURST_BYTES = 8 * 1024 * 1024;

/** The rate of {@link readStderr}. */
export interface StderrRateOptions {
  /** @default MAX_STDERR_BYTES_PER_SECOND */
  readonly perSecond?: number;
  /** @default MAX_STDERR_BURST_BYTES */
  readonly burst?: number;
}

/**
 * Reads a stdio server's `stderr` (the transport's, a Readable; none: nothing to read), handing each
 * chunk to `onChunk`, at most `perSecond` bytes a second on average beyond a `burst`: past them the
 * stream is paused until the bytes read over are paid for. Its one timer goes with the stream
 * (unref'd, at most one chunk's wait).
 */
export function readStderr(from: Stream | null, onChunk: (chunk: Buffer) => void, options: StderrRateOptions = {}): void {
  if (!from) return;
  const stderr = from as Readable;
  const perSecond = options.perSecond ?? MAX_STDERR_BYTES_PER_SECOND;
  const burst = options.burst ?? MAX_STDERR_BURST_BYTES;
  let tokens = burst;
  let at = performance.now();
  let timer: NodeJS.Timeout | undefined;
  stderr.on('data', (chunk: Buffer) => {
    onChunk(chunk);
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - at) * perSecond) / 1_000) - chunk.length;
    at = now;
    if (tokens >= 0 || timer !== undefined) return;
    stderr.pause();
    timer = setTimeout(() => {
      timer = undefined;
      stderr.resume();
    }, Math.ceil((-tokens * 1_000) / perSecond));
    timer.unref();
  });
  stderr.once('close', () => clearTimeout(timer));
}
