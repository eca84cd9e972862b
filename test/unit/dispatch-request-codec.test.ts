import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { DispatchMode, DispatchRequestSchema, ToolCallSchema, type DispatchRequest } from '../../gen/dispatch/v1/dispatch_pb';
import { decodeDispatchRequest } from '../../src/server/dispatch-request-codec';
import { expectRefusesWhatFromBinaryRefuses, fieldList } from '../helpers/codec-properties';

const uint32 = fc.oneof(fc.constant(0), fc.nat({ max: 300 }), fc.nat({ max: 2 ** 32 - 1 }));
const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constant('\uFFFD sent as such'), fc.string({ minLength: 130, maxLength: 5_000 }));
const toolCall = fc.record({ id: text, name: text, arguments: text }, { requiredKeys: [] });
const request = fc.record(
  {
    sessionId: text,
    turn: uint32,
    calls: fc.array(toolCall, { maxLength: 5 }),
    mode: fc.oneof(fc.constantFrom(DispatchMode.SEQUENTIAL, DispatchMode.PARALLEL), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
    maxConcurrency: uint32,
    offeredTools: fc.array(text, { maxLength: 4 }),
    interactive: fc.boolean(),
  },
  { requiredKeys: [] },
);

const varint = (n: bigint): number[] => {
  const out: number[] = [];
  let v = n;
  do {
    out.push(Number(v & 0x7fn) | (v > 0x7fn ? 0x80 : 0));
    v >>= 7n;
  } while (v > 0n);
  return out;
};
/** An unknown field (numbers 8 and up) of every wire type, groups included. */
const unknownField: fc.Arbitrary<number[]> = fc.letrec<{ field: number[] }>((tie) => ({
  field: fc.oneof(
    { depthSize: 'small' },
    fc.tuple(fc.integer({ min: 8, max: 2 ** 29 - 1 }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })).map(([n, v]) => [...varint(BigInt(n << 3) & 0xffffffffn), ...varint(v)]),
    fc.tuple(fc.integer({ min: 8, max: 1000 }), fc.uint8Array({ minLength: 8, maxLength: 8 })).map(([n, b]) => [...varint(BigInt((n << 3) | 1)), ...b]),
    fc.tuple(fc.integer({ min: 8, max: 1000 }), fc.uint8Array({ maxLength: 40 })).map(([n, b]) => [...varint(BigInt((n << 3) | 2)), ...varint(BigInt(b.length)), ...b]),
    fc.tuple(fc.integer({ min: 8, max: 1000 }), fc.uint8Array({ minLength: 4, maxLength: 4 })).map(([n, b]) => [...varint(BigInt((n << 3) | 5)), ...b]),
    fc.tuple(fc.integer({ min: 8, max: 1000 }), fc.array(tie('field'), { maxLength: 3 })).map(([n, inner]) => [...varint(BigInt((n << 3) | 3)), ...inner.flat(), ...varint(BigInt((n << 3) | 4))]),
  ),
})).field;

/** What fromBinary makes, without the unknown fields it keeps (the hand decoder skips them). */
function reference(bytes: Uint8Array): DispatchRequest {
  const decoded = fromBinary(DispatchRequestSchema, bytes);
  const strip = (m: object) => delete (m as { $unknown?: unknown }).$unknown;
  strip(decoded);
  decoded.calls.forEach(strip);
  return decoded;
}

const encode = (init: Parameters<typeof create<typeof DispatchRequestSchema>>[1]) => toBinary(DispatchRequestSchema, create(DispatchRequestSchema, init));

describe('decodeDispatchRequest: the hot path decoder', () => {
  it('knows every field of the messages it decodes (a field added to the proto fails here)', () => {
    expect(fieldList(DispatchRequestSchema)).toEqual(['1:sessionId', '2:turn', '3:calls', '4:mode', '5:maxConcurrency', '6:offeredTools', '7:interactive']);
    expect(fieldList(ToolCallSchema)).toEqual(['1:id', '2:name', '3:arguments']);
  });

  it('makes the same message as fromBinary for arbitrary requests', () => {
    fc.assert(
      fc.property(request, (init) => {
        const bytes = Buffer.from(encode(init));
        expect(decodeDispatchRequest(bytes)).toStrictEqual(reference(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('skips unknown fields of every wire type, and merges messages sent back to back, as fromBinary does', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(request.map((init) => [...encode(init)]), unknownField), { maxLength: 6 }), (parts) => {
        const bytes = Buffer.from(parts.flat());
        expect(decodeDispatchRequest(bytes)).toStrictEqual(reference(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('reads the slice grpc-js hands over, not the buffer behind it', () => {
    const bytes = encode({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] });
    const pool = Buffer.concat([Buffer.from([0x0a, 0x01, 0x78]), bytes, Buffer.from([0x0a, 0x01, 0x79])]);
    const slice = pool.subarray(3, 3 + bytes.length);
    expect(decodeDispatchRequest(slice)).toStrictEqual(reference(slice));
  });

  // fromBinary bounds an unknown field skipped inside a call by the whole request, not the call,
  // so it accepts a few malformed requests that this decoder refuses ([24, 1, 61, 0, 0, 0, 0]).
  it('refuses malformed bytes (truncated, bad tags and varints, invalid UTF-8) whenever fromBinary does; where both accept, they agree', () => {
    const malformed = [
      Buffer.from([0x0a, 0x05, 0x61]), // a string longer than the message
      Buffer.from([0x1a, 0x03, 0x0a, 0x05, 0x61]), // a call whose field runs past the call
      Buffer.from([0x00, 0x01]), // field number 0
      Buffer.from([0x0f]), // wire type 7
      Buffer.from([0x10, ...Array(10).fill(0xff), 0x01]), // a varint of 11 bytes
      Buffer.from([0x0a, 0x02, 0xc3, 0x28]), // invalid UTF-8
      Buffer.from([0x43]), // a group never ended
      Buffer.from([0x43, 0x4c]), // a group ended by another field's end tag
      Buffer.from([0xcd, 0x80, 0x80, 0x80, 0x10, 0x00]), // a tag past 32 bits
    ];
    for (const bytes of malformed) {
      expect(() => fromBinary(DispatchRequestSchema, bytes)).toThrow();
      expect(() => decodeDispatchRequest(bytes)).toThrow();
    }
    expectRefusesWhatFromBinaryRefuses(decodeDispatchRequest, reference, undefined, 60);
  });
});

test('a bool sent as a 10-byte varint with only bits past 64 set is false, as fromBinary reads it (found in review)', () => {
  // Field 7 (interactive), varint: 0x38, nine 0x80 continuation bytes, then 0x02 (bit 64).
  const bytes = Buffer.from([0x38, ...Array<number>(9).fill(0x80), 0x02]);
  expect(fromBinary(DispatchRequestSchema, bytes).interactive).toBe(false);
  expect(decodeDispatchRequest(bytes).interactive).toBe(false);
  const bit63 = Buffer.from([0x38, ...Array<number>(9).fill(0x80), 0x01]);
  expect(decodeDispatchRequest(bit63).interactive).toBe(fromBinary(DispatchRequestSchema, bit63).interactive);
});
