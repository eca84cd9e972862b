import fc from 'fast-check';

function varint(value: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

type Field = { no: number; kind: 'varint'; value: bigint } | { no: number; kind: 'bytes'; value: Uint8Array };

const encode = (fields: readonly Field[]): Buffer =>
  Buffer.from(
    fields.flatMap((f) => (f.kind === 'varint' ? [...varint(BigInt((f.no << 3) | 0)), ...varint(f.value)] : [...varint(BigInt((f.no << 3) | 2)), ...varint(BigInt(f.value.length)), ...f.value])),
  );

const utf8 = fc.string({ unit: 'grapheme', maxLength: 64 }).map((s) => new Uint8Array(Buffer.from(s)));
const jsonText = fc.jsonValue({ maxDepth: 3 }).map((v) => new Uint8Array(Buffer.from(JSON.stringify(v) ?? 'null')));

/**
 * Well-formed protobuf wire data with random fields 1-8: varints and length-delimited values
 * (UTF-8 text, JSON text, nested messages), so that most inputs decode and reach the handlers.
 */
export const wireMessage: fc.Arbitrary<Buffer> = fc.letrec<{ message: Field[] }>((tie) => ({
  message: fc.array(
    fc.oneof(
      fc.record({ no: fc.integer({ min: 1, max: 8 }), kind: fc.constant('varint' as const), value: fc.oneof(fc.bigInt({ min: 0n, max: 300n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })) }),
      fc.record({ no: fc.integer({ min: 1, max: 8 }), kind: fc.constant('bytes' as const), value: fc.oneof(utf8, jsonText, fc.uint8Array({ maxLength: 32 })) }),
      fc.record({ no: fc.integer({ min: 1, max: 8 }), kind: fc.constant('bytes' as const), value: tie('message').map((m) => new Uint8Array(encode(m as Field[]))) }),
    ),
    { maxLength: 6, depthIdentifier: 'wire' },
  ),
})).message.map(encode);
