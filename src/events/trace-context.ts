import { randomFillSync } from 'node:crypto';

/** A W3C trace context: the ids of a span and its sampled flag, as lowercase hex. */
export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  /** Two hex digits; `01` when sampled. */
  readonly flags: string;
}

/** Random bytes fetched from the OS at once, so ids cost a slice and a hex conversion. */
const ID_POOL_BYTES = 8192;
const pool = Buffer.allocUnsafe(ID_POOL_BYTES);
let offset = ID_POOL_BYTES;

function randomHex(bytes: number): string {
  for (;;) {
    if (offset + bytes > ID_POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    const hex = pool.toString('hex', offset, offset + bytes);
    offset += bytes;
    if (!/^0+$/.test(hex)) return hex;
  }
}

/** Random 32-bit words fetched from the OS at once, for ids kept as numbers (see span-tracer.ts). */
const WORD_POOL = new Uint32Array(1024);
let wordAt = WORD_POOL.length;

/** A random 32-bit word. */
export function randomWord(): number {
  if (wordAt === WORD_POOL.length) {
    randomFillSync(WORD_POOL);
    wordAt = 0;
  }
  return WORD_POOL[wordAt++]!;
}

const HEX_SCRATCH = Buffer.allocUnsafe(16);

/**
 * Two or four 32-bit words as lowercase hex, 8 digits each: their big-endian bytes through
 * Buffer's hex encoding, one native call (Number#toString(16) per word measured ~4x dearer).
 */
export function wordsHex(w0: number, w1: number, w2?: number, w3?: number): string {
  HEX_SCRATCH.writeUInt32BE(w0 >>> 0, 0);
  HEX_SCRATCH.writeUInt32BE(w1 >>> 0, 4);
  if (w2 === undefined) return HEX_SCRATCH.toString('hex', 0, 8);
  HEX_SCRATCH.writeUInt32BE(w2 >>> 0, 8);
  HEX_SCRATCH.writeUInt32BE(w3! >>> 0, 12);
  return HEX_SCRATCH.toString('hex', 0, 16);
}

/** The `index`th 32-bit word of lowercase hex digits (ids are validated hex where they enter). */
export const hexWord = (hex: string, index: number): number => parseInt(hex.slice(index * 8, index * 8 + 8), 16) >>> 0;

/** A new random trace id (32 hex digits, never all zero). */
export const newTraceId = (): string => randomHex(16);

/** A new random span id (16 hex digits, never all zero). */
export const newSpanId = (): string => randomHex(8);

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The one trace flag defined (W3C Trace Context level 1): sampled. */
const SAMPLED_FLAG = 0x01;

/**
 * Reads a `traceparent` header; undefined when absent or malformed (version ff, zero ids, hex in
 * uppercase, which W3C Trace Context makes invalid). Its flags are kept to the sampled bit: the
 * others are reserved, and a span passes on only the flags it knows.
 */
export function parseTraceparent(header: string | undefined): TraceContext | undefined {
  if (header === undefined) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, flags: parseInt(flags!, 16) & SAMPLED_FLAG ? '01' : '00' };
}

/** The `traceparent` header of a span. */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
}
