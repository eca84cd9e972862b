import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { CompletionSchema, HelloSchema, WorkerMessageSchema, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';
import { decodeWorkerMessage, encodeWorkerMessage } from '../../src/server/worker-message-codec';
import { expectRefusesWhatFromBinaryRefuses, fieldList } from '../helpers/codec-properties';

const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ minLength: 130, maxLength: 5_000 }));
const completion = fc.record({ assignmentId: text, output: text, isError: fc.boolean(), errorMessage: text, retryAfterMs: fc.oneof(fc.constant(0), fc.nat({ max: 4_294_967_295 })) }, { requiredKeys: [] });
const message = fc.oneof(
  completion.map((value) => create(WorkerMessageSchema, { msg: { case: 'completion', value } })),
  fc.constant(create(WorkerMessageSchema, { msg: { case: 'heartbeat', value: {} } })),
  fc.constant(create(WorkerMessageSchema, { msg: { case: 'drain', value: {} } })),
  fc.constant(create(WorkerMessageSchema, {})),
  fc.record({ workerId: text, name: text }).map(({ workerId, name }) => create(WorkerMessageSchema, { msg: { case: 'hello', value: { workerId, tools: [{ name, inputSchema: '{}', effect: Effect.READ_ONLY }] } } })),
);
/** Unknown fields at the top level (numbers 5 and up): a varint, and length-delimited bytes. */
const unknownField = fc.oneof(
  fc.tuple(fc.integer({ min: 5, max: 15 }), fc.nat({ max: 127 })).map(([n, v]) => [n << 3, v]),
  fc.tuple(fc.integer({ min: 5, max: 15 }), fc.uint8Array({ maxLength: 20 })).map(([n, b]) => [(n << 3) | 2, b.length, ...b]),
);

/** A message without the unknown fields fromBinary keeps (the hand decoder skips them; a Hello goes to fromBinary whole). */
function known(decoded: WorkerMessage): WorkerMessage {
  delete (decoded as { $unknown?: unknown }).$unknown;
  if (decoded.msg.case !== 'hello' && decoded.msg.value) delete (decoded.msg.value as { $unknown?: unknown }).$unknown;
  return decoded;
}
const reference = (bytes: Uint8Array) => known(fromBinary(WorkerMessageSchema, bytes));

describe('decodeWorkerMessage: the hot path decoder of the Work stream', () => {
  it('knows every field of the messages it decodes by hand (a field added to the proto fails here)', () => {
    expect(fieldList(WorkerMessageSchema)).toEqual(['1:hello', '2:completion', '3:heartbeat', '4:drain']);
    expect(fieldList(CompletionSchema)).toEqual(['1:assignmentId', '2:output', '3:isError', '4:errorMessage', '5:retryAfterMs']);
    expect(fieldList(HelloSchema)).toEqual(['1:workerId', '2:tools', '3:maxReceiveMessageBytes']);
  });

  it('makes the same message as fromBinary for arbitrary messages sent alone or back to back (oneof cases merged or replaced), with unknown fields', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(message.map((m) => [...toBinary(WorkerMessageSchema, m)]), unknownField), { maxLength: 4 }), (parts) => {
        const bytes = Buffer.from(parts.flat());
        expect(known(decodeWorkerMessage(bytes))).toStrictEqual(reference(bytes));
      }),
      { numRuns: 400 },
    );
  });

  it('refuses whatever fromBinary refuses; where both accept, they agree', () => {
    expect(() => decodeWorkerMessage(Buffer.from([0x12, 0x05, 0x0a]))).toThrow();
    expect(() => decodeWorkerMessage(Buffer.from([0x1a, 0x02, 0x0f, 0x00]))).toThrow();
    expectRefusesWhatFromBinaryRefuses(decodeWorkerMessage, reference, known);
  });
});

describe('encodeWorkerMessage: a worker’s end of the stream', () => {
  it('writes exactly the bytes toBinary writes, for arbitrary messages (a Hello through toBinary)', () => {
    fc.assert(
      fc.property(message, (m) => {
        expect(encodeWorkerMessage(m)).toEqual(Buffer.from(toBinary(WorkerMessageSchema, m)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes the unknown fields of a message it was given as toBinary does', () => {
    const bytes = Buffer.from([...toBinary(WorkerMessageSchema, create(WorkerMessageSchema, { msg: { case: 'completion', value: { assignmentId: 'a', output: 'o' } } })), 0x78, 0x05]);
    const decoded = fromBinary(WorkerMessageSchema, bytes);
    expect(encodeWorkerMessage(decoded)).toEqual(Buffer.from(toBinary(WorkerMessageSchema, decoded)));
    expect(encodeWorkerMessage(decoded)).toEqual(bytes);
  });
});
