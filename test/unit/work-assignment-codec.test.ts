import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { ToolCallSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { WorkAssignmentSchema } from '../../gen/dispatch/v1/worker_pb';
import { varintSize, Writer } from '../../src/wire/sized-writer';
import { encodeWorkAssignment } from '../../src/server/work-assignment-codec';

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
    const fields = (schema: { fields: readonly { number: number; localName: string }[] }) => schema.fields.map((f) => `${f.number}:${f.localName}`);
    expect(fields(WorkAssignmentSchema)).toEqual(['1:assignmentId', '2:call', '3:sessionId', '4:attempt', '5:idempotencyKey', '6:deadlineMs', '7:traceparent', '8:cancel']);
    expect(fields(ToolCallSchema)).toEqual(['1:id', '2:name', '3:arguments']);
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
