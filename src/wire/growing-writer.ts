import { putVarint, varintSize } from './sized-writer';

// A protobuf writer for messages whose size is not known beforehand (OTLP spans, encoded as they
// end): one Buffer that grows; a nested message's length is reserved as one byte and widened when
// the message turns out longer. sized-writer.ts is the writer of messages sized first.

/** Protobuf wire types, the low three bits of a tag. */
export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;
export const I32 = 5;

/** A protobuf writer over one Buffer that grows; nested lengths are reserved as one byte and widened when needed. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initial: number | Buffer = 16 * 1024) {
    this.buf = typeof initial === 'number' ? Buffer.allocUnsafe(initial) : initial;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    if (value >= 0 && value < 0x80) {
      this.byte(value);
      return;
    }
    this.ensure(10);
    if (value < 0 || value > Number.MAX_SAFE_INTEGER) {
      let big = BigInt.asUintN(64, BigInt(value));
      while (big > 127n) {
        this.buf[this.pos++] = Number(big & 127n) | 128;
        big >>= 7n;
      }
      this.buf[this.pos++] = Number(big);
      return;
    }
    this.pos = putVarint(this.buf, this.pos, value);
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** One byte: a tag or a varint below 128, the most frequent writes. */
  byte(value: number): void {
    if (this.pos >= this.buf.length) this.ensure(1);
    this.buf[this.pos++] = value;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(value >>> 0, this.pos);
  }

  /** A fixed64 from its two 32-bit halves. */
  fixed64(low: number, high: number): void {
    this.ensure(8);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
  }

  /** Reserves a one-byte length; {@link finish} writes it. */
  start(): number {
    this.ensure(1);
    return this.pos++;
  }

  finish(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) {
      this.buf[at] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    putVarint(this.buf, at, length);
  }

  string(value: string): void {
    // Most strings here are short and ASCII: written byte by byte, with no call into C++.
    const length = value.length;
    if (length < 128) {
      this.ensure(length + 1);
      const buf = this.buf;
      let at = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 0x80) break;
        buf[at++] = code;
      }
      if (i === length) {
        buf[this.pos] = length;
        this.pos = at;
        return;
      }
    }
    this.ensure(length * 3 + 1);
    const at = this.start();
    this.pos += this.buf.write(value, this.pos);
    this.finish(at);
  }

  /** Lowercase or uppercase hex digits as bytes (trace and span ids), with their length. */
  hexBytes(hex: string): void {
    const length = hex.length >>> 1;
    this.ensure(length + 1);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = length;
    for (let i = 0; i < hex.length; i += 2) buf[at++] = (HEX_VALUE[hex.charCodeAt(i)]! << 4) | HEX_VALUE[hex.charCodeAt(i + 1)]!;
    this.pos = at;
  }

  /**
   * An id of 32-bit words as a length-delimited value, each word big-endian (so that its bytes
   * read as the words' hex digits in order).
   */
  idWords(w0: number, w1: number, w2?: number, w3?: number): void {
    const words = w2 === undefined ? 2 : 4;
    this.ensure(1 + words * 4);
    const buf = this.buf;
    let at = this.pos;
    buf[at++] = words * 4;
    at = putWord(buf, at, w0);
    at = putWord(buf, at, w1);
    if (w2 !== undefined) {
      at = putWord(buf, at, w2);
      at = putWord(buf, at, w3!);
    }
    this.pos = at;
  }

  /** A length-delimited value. */
  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.raw(value);
  }

  /** Bytes already encoded, as they are. */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** The bytes written so far, copied out. */
  copy(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

function putWord(buf: Buffer, at: number, word: number): number {
  buf[at] = word >>> 24;
  buf[at + 1] = (word >>> 16) & 0xff;
  buf[at + 2] = (word >>> 8) & 0xff;
  buf[at + 3] = word & 0xff;
  return at + 4;
}

/** The value of each hex digit by its char code (ids are validated hex where they enter). */
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUE[97 + i] = HEX_VALUE[65 + i] = 10 + i;
