// The writer of the hand encoders of hot messages (src/server/dispatch-response-codec.ts,
// work-assignment-codec.ts): sizes first, then one Buffer of exactly that size, written field by
// field in field-number order, as protobuf-es's toBinary writes them (default values left out).
// growing-writer.ts is its counterpart for messages whose size is not known beforehand.

export const isUint32 = (value: number): boolean => value >>> 0 === value;
/** Bytes of a varint of a non-negative safe integer. */
export function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 5;
  for (let v = Math.floor(value / 0x800000000); v > 0; v = Math.floor(v / 0x80)) size++;
  return size;
}
/** Size of a length-delimited field of `bytes` payload bytes (one-byte tags only here). */
export const fieldSize = (bytes: number): number => 1 + varintSize(bytes) + bytes;
export const stringSize = (text: string): number => (text === '' ? 0 : fieldSize(utf8Bytes(text)));

/**
 * Strings up to this many UTF-16 units are measured and written by the loops below when they are
 * ASCII (call ids, tool names): Buffer.byteLength and Buffer#write cost ~60 ns a call into C++,
 * several times the loop; longer ones, the loop costs more.
 */
const SHORT_CHARS = 32;

/** The UTF-8 bytes of `text`: a short ASCII text's length (counted here), else Buffer.byteLength's. */
function utf8Bytes(text: string): number {
  const length = text.length;
  if (length > SHORT_CHARS) return Buffer.byteLength(text);
  for (let i = 0; i < length; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text);
  return length;
}
export const uintSize = (value: number): number => (value === 0 ? 0 : 1 + varintSize(value));

/** Writes a varint of a non-negative safe integer at `pos` (past 32 bits by division: `>>>` keeps 32); returns the position after it. */
export function putVarint(buf: Buffer, pos: number, value: number): number {
  let v = value;
  while (v > 0xffffffff) {
    buf[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  while (v > 0x7f) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Writes fields into a Buffer sized beforehand. */
export class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(value: number): void {
    this.pos = putVarint(this.buf, this.pos, value);
  }

  uint(tag: number, value: number): void {
    if (value === 0) return;
    this.buf[this.pos++] = tag;
    this.varint(value);
  }

  /** A nested message's tag and length; its fields are written next. */
  nested(tag: number, length: number): void {
    this.buf[this.pos++] = tag;
    this.varint(length);
  }

  flag(tag: number, value: boolean): void {
    if (!value) return;
    this.buf[this.pos++] = tag;
    this.buf[this.pos++] = 1;
  }

  string(tag: number, text: string, always = false): void {
    if (text === '' && !always) return;
    this.buf[this.pos++] = tag;
    const bytes = utf8Bytes(text);
    this.varint(bytes);
    // As many bytes as units: ASCII, each unit its byte.
    if (bytes === text.length && bytes <= SHORT_CHARS) {
      const buf = this.buf;
      for (let i = 0; i < bytes; i++) buf[this.pos + i] = text.charCodeAt(i);
      this.pos += bytes;
    } else this.pos += this.buf.write(text, this.pos, bytes, 'utf8');
  }
}
