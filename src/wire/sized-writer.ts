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
export const stringSize = (text: string): number => (text === '' ? 0 : fieldSize(Buffer.byteLength(text)));
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
    const bytes = Buffer.byteLength(text);
    this.varint(bytes);
    this.pos += this.buf.write(text, this.pos, bytes, 'utf8');
  }
}
