// The reader of the hand decoders of hot messages (src/server/dispatch-request-codec.ts,
// worker-message-codec.ts, and a worker's decodeWorkAssignment in work-assignment-codec.ts): varints, strings, nested messages and skipping, straight from the
// Buffer grpc-js hands over. Malformed input throws, as protobuf-es's BinaryReader does, so
// grpc-js answers it with INTERNAL like any other request that does not deserialize.
import { isUtf8 } from 'node:buffer';
import { I32, I64, LEN, VARINT } from './growing-writer';

const START_GROUP = 3;
const END_GROUP = 4;

/** Nesting of groups skipped inside an unknown field, as protobuf-es's default recursion limit. */
const MAX_GROUP_DEPTH = 100;

/**
 * Strings up to this many bytes are read by asciiText when they are ASCII (call ids, tool names,
 * session ids): Buffer#toString costs ~55 ns a call into C++, twice the loop. At most 12, so that
 * every string the loop builds is flat (V8 joins 13 characters and more as a rope).
 */
const SHORT_BYTES = 12;

/** The ASCII text of `buf` from `start` to `end`, or '' when a byte is not ASCII (or there is none). */
function asciiText(buf: Buffer, start: number, end: number): string {
  let text = '';
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    if (byte >= 0x80) return '';
    text += String.fromCharCode(byte);
  }
  return text;
}

/** Reads protobuf wire format from `buf`, from `start` up to `end` (a nested message's bounds). */
export class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** A varint's low 32 bits, unsigned (uint32 fields; int32 ones take `| 0`). At most 10 bytes. */
  varint32(): number {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    for (let read = 0; read < 10; read++) {
      if (this.pos >= this.end) throw new RangeError('premature EOF');
      const byte = buf[this.pos++]!;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) === 0) return result >>> 0;
    }
    throw new Error('invalid varint');
  }

  /** A varint as an unsigned 64-bit integer (uint64 fields), bits past 64 dropped as protobuf-es drops them. At most 10 bytes. */
  varint64(): bigint {
    const buf = this.buf;
    let low = 0;
    let high = 0;
    for (let read = 0; read < 10; read++) {
      if (this.pos >= this.end) throw new RangeError('premature EOF');
      const byte = buf[this.pos++]!;
      const bits = byte & 0x7f;
      const shift = read * 7;
      if (shift < 28) low |= bits << shift;
      else if (shift === 28) {
        low |= bits << 28;
        high = bits >>> 4;
      } else high |= bits << (shift - 32);
      if ((byte & 0x80) === 0) {
        high >>>= 0;
        // Most values (deadlines in epoch ms) fit 53 bits: one BigInt made from a number.
        return high < 0x200000 ? BigInt(high * 0x100000000 + (low >>> 0)) : (BigInt(high) << 32n) | BigInt(low >>> 0);
      }
    }
    throw new Error('invalid varint');
  }

  /**
   * A varint read as a bool: true when any of its 64 bits is set. The tenth byte holds only bit 63
   * (its other bits fall outside 64 bits, which protobuf-es and protobuf drop).
   */
  bool(): boolean {
    let any = false;
    for (let read = 0; read < 10; read++) {
      if (this.pos >= this.end) throw new RangeError('premature EOF');
      const byte = this.buf[this.pos++]!;
      if ((byte & (read === 9 ? 0x01 : 0x7f)) !== 0) any = true;
      if ((byte & 0x80) === 0) return any;
    }
    throw new Error('invalid varint');
  }

  /** A field's tag: field number << 3 | wire type. Field number 0 and wire types 6 and 7 are illegal. */
  tag(): number {
    const start = this.pos;
    const tag = this.varint32();
    const read = this.pos - start;
    if (read > 5 || (read === 5 && this.buf[this.pos - 1]! > 0x0f)) throw new Error('illegal tag: varint overflows uint32');
    if (tag >>> 3 === 0 || (tag & 7) > 5) throw new Error(`illegal tag: field no ${tag >>> 3} wire type ${tag & 7}`);
    return tag;
  }

  /** The end of a length-delimited payload starting here, checked against the message's end. */
  delimited(): number {
    const length = this.varint32();
    const end = this.pos + length;
    if (end > this.end) throw new RangeError('premature EOF');
    return end;
  }

  /** A reader of the length-delimited message starting here; this one moves past it. */
  nested(): Reader {
    const end = this.delimited();
    const inner = new Reader(this.buf, this.pos, end);
    this.pos = end;
    return inner;
  }

  /** A length-delimited bytes field, as a view of the buffer (not a copy). */
  bytes(): Buffer {
    const end = this.delimited();
    const bytes = this.buf.subarray(this.pos, end);
    this.pos = end;
    return bytes;
  }

  /** A fixed32 field, unsigned. */
  fixed32(): number {
    this.advance(4);
    return this.buf.readUInt32LE(this.pos - 4);
  }

  /** A fixed64 field, unsigned. */
  fixed64(): bigint {
    this.advance(8);
    return this.buf.readBigUInt64LE(this.pos - 8);
  }

  /** A double field. */
  double(): number {
    this.advance(8);
    return this.buf.readDoubleLE(this.pos - 8);
  }

  /** A length-delimited UTF-8 string; invalid UTF-8 throws (proto3 strings must be valid). */
  string(): string {
    const end = this.delimited();
    const ascii = end - this.pos <= SHORT_BYTES ? asciiText(this.buf, this.pos, end) : '';
    const text = ascii || this.buf.toString('utf8', this.pos, end);
    // A replacement character is either sent as such or marks invalid bytes: only then check (ASCII holds none).
    if (ascii === '' && text.includes('\uFFFD') && !isUtf8(this.buf.subarray(this.pos, end))) throw new TypeError('invalid UTF-8 in a string field');
    this.pos = end;
    return text;
  }

  /** Skips the value of a field whose tag was just read (an unknown field, or one of an unexpected wire type). */
  skip(tag: number, depth = 0): void {
    switch (tag & 7) {
      case VARINT:
        this.varint32();
        return;
      case I64:
        this.advance(8);
        return;
      case LEN:
        this.pos = this.delimited();
        return;
      case START_GROUP:
        if (depth >= MAX_GROUP_DEPTH) throw new Error('maximum recursion depth reached');
        for (;;) {
          if (this.pos >= this.end) throw new RangeError('premature EOF');
          const inner = this.tag();
          if ((inner & 7) === END_GROUP) {
            if (inner >>> 3 !== tag >>> 3) throw new Error('invalid end group tag');
            return;
          }
          this.skip(inner, depth + 1);
        }
      case I32:
        this.advance(4);
        return;
      default:
        throw new Error(`cannot skip wire type ${tag & 7}`);
    }
  }

  private advance(bytes: number): void {
    if (this.pos + bytes > this.end) throw new RangeError('premature EOF');
    this.pos += bytes;
  }
}
