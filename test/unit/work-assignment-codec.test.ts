import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { ToolCallSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { WorkAssignmentSchema, type WorkAssignment } from '../../gen/dispatch/v1/worker_pb';
import { varintSize, Writer } from '../../src/wire/sized-writer';
import { decodeWorkAssignment, encodeWorkAssignment, workAssignmentBytes, workAssignmentBytesAtMost } from '../../src/server/work-assignment-codec';
import { expectRefusesWhatFromBinaryRefuses, fieldList } from '../helpers/codec-properties';

const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ minLength: 130, maxLength: 20_000 }));
const assignment = fc.record(
  {
    assignmentId: text,
    call: fc.record({ id: text, name: text, arguments: text }, { requiredKeys: [] }),
    sessionId: text,
    attempt: fc.oneof(fc.constant(0), fc.nat({ max: 300 }), fc.nat({ max: 2 ** 32 - 1 })),
    idempotencyKey: text,
    deadlineMs: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 40n }), fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER) }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
    traceparent: text,
    cancel: fc.boolean(),
  },
  { requiredKeys: [] },
);

describe('encodeWorkAssignment: the worker stream encoder', () => {
  it('knows every field of the messages it encodes (a field added to the proto fails here)', () => {
    expect(fieldList(WorkAssignmentSchema)).toEqual(['1:assignmentId', '2:call', '3:sessionId', '4:attempt', '5:idempotencyKey', '6:deadlineMs', '7:traceparent', '8:cancel']);
    expect(fieldList(ToolCallSchema)).toEqual(['1:id', '2:name', '3:arguments']);
  });

  it('writes exactly the bytes toBinary writes, for arbitrary assignments (deadlines past 2^53 go to toBinary)', () => {
    fc.assert(
      fc.property(assignment, ({ call, ...rest }) => {
        const message = create(WorkAssignmentSchema, { ...rest, call: call && create(ToolCallSchema, call) });
        expect(encodeWorkAssignment(message)).toEqual(Buffer.from(toBinary(WorkAssignmentSchema, message)));
      }),
      { numRuns: 300 },
    );
  });

  it("measures an assignment as its encoding's length, never above what its lengths allow", () => {
    fc.assert(
      fc.property(assignment, ({ call, ...rest }) => {
        const message = create(WorkAssignmentSchema, { ...rest, call: call && create(ToolCallSchema, call) });
        const bytes = toBinary(WorkAssignmentSchema, message).length;
        expect(workAssignmentBytes(message)).toBe(bytes);
        expect(workAssignmentBytesAtMost(message)).toBeGreaterThanOrEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('writes varints of every safe integer width as protobuf does', () => {
    for (const value of [0, 127, 128, 2 ** 32 - 1, 2 ** 32, 2 ** 35, 1_764_500_000_123, Number.MAX_SAFE_INTEGER]) {
      const w = new Writer(Buffer.alloc(varintSize(value)));
      w.varint(value);
      expect(w.pos).toBe(varintSize(value));
      const expected = Buffer.from(toBinary(WorkAssignmentSchema, create(WorkAssignmentSchema, { deadlineMs: BigInt(value) }))).subarray(value === 0 ? 0 : 1);
      if (value !== 0) expect(w.buf).toEqual(expected);
    }
  });
});

/** An assignment as protobuf-es makes it from arbitrary fields. */
const message = assignment.map(({ call, ...rest }) => create(WorkAssignmentSchema, { ...rest, call: call && create(ToolCallSchema, call) }));
/** Unknown fields (numbers 9 and up at the top level): a varint, fixed64, fixed32, and length-delimited bytes. */
const unknownField = fc.oneof(
  fc.tuple(fc.integer({ min: 9, max: 15 }), fc.nat({ max: 127 })).map(([n, v]) => [n << 3, v]),
  fc.integer({ min: 9, max: 15 }).map((n) => [(n << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]),
  fc.integer({ min: 9, max: 15 }).map((n) => [(n << 3) | 5, 1, 2, 3, 4]),
  fc.tuple(fc.integer({ min: 9, max: 15 }), fc.uint8Array({ maxLength: 20 })).map(([n, b]) => [(n << 3) | 2, b.length, ...b]),
);

/** A decoded assignment without the unknown fields fromBinary keeps (the hand decoder skips them). */
function known(decoded: WorkAssignment): WorkAssignment {
  delete (decoded as { $unknown?: unknown }).$unknown;
  if (decoded.call) delete (decoded.call as { $unknown?: unknown }).$unknown;
  return decoded;
}
const reference = (bytes: Uint8Array) => known(fromBinary(WorkAssignmentSchema, bytes));

describe('decodeWorkAssignment: a worker’s end of the stream', () => {
  it('makes the same message as fromBinary for arbitrary assignments sent alone or back to back (the call merged), with unknown fields', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(message.map((m) => [...toBinary(WorkAssignmentSchema, m)]), unknownField), { maxLength: 4 }), (parts) => {
        const bytes = Buffer.from(parts.flat());
        expect(known(decodeWorkAssignment(bytes))).toStrictEqual(reference(bytes));
      }),
      { numRuns: 400 },
    );
  });

  it('reads uint64 deadlines of every width, and 10-byte varints past 64 bits as protobuf-es does', () => {
    for (const deadline of [0n, 1n, 127n, 128n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n, 1_764_500_000_123n]) {
      const bytes = Buffer.from(toBinary(WorkAssignmentSchema, create(WorkAssignmentSchema, { assignmentId: 'a', deadlineMs: deadline })));
      expect(decodeWorkAssignment(bytes).deadlineMs).toBe(deadline);
    }
    const overlong = Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    expect(decodeWorkAssignment(overlong).deadlineMs).toBe(reference(overlong).deadlineMs);
  });

  it('refuses whatever fromBinary refuses; where both accept, they agree', () => {
    expect(() => decodeWorkAssignment(Buffer.from([0x12, 0x05, 0x0a]))).toThrow();
    expect(() => decodeWorkAssignment(Buffer.from([0x30, 0xff]))).toThrow();
    expectRefusesWhatFromBinaryRefuses(decodeWorkAssignment, reference, known);
  });
});
