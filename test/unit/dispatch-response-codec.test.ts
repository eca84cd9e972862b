import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { DispatchResponseSchema, ErrorKind, ToolErrorSchema, ToolResultSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { encodeDispatchResponse } from '../../src/server/dispatch-response-codec';
import { fieldList } from '../helpers/codec-properties';

const uint32 = fc.oneof(fc.constant(0), fc.nat({ max: 300 }), fc.nat({ max: 2 ** 32 - 1 }));
const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ minLength: 130, maxLength: 20_000 }));
const toolError = fc.record({
  kind: fc.constantFrom(...(Object.values(ErrorKind).filter((v) => typeof v === 'number') as ErrorKind[])),
  message: text,
  recoverable: fc.boolean(),
  suggestion: text,
  retryAfterMs: uint32,
});
const toolResult = fc.record(
  {
    toolCallId: text,
    output: text,
    isError: fc.boolean(),
    error: toolError,
    attempts: uint32,
    durationMs: uint32,
    resolvedToolName: text,
    truncated: fc.boolean(),
    resultHandle: text,
    idempotentReplay: fc.boolean(),
    cached: fc.boolean(),
    warnings: fc.array(text, { maxLength: 4 }),
  },
  { requiredKeys: [] },
);

describe('encodeDispatchResponse: the hot path encoder', () => {
  it('knows every field of the messages it encodes (a field added to the proto fails here)', () => {
    expect(fieldList(DispatchResponseSchema)).toEqual(['1:results']);
    expect(fieldList(ToolResultSchema)).toEqual([
      '1:toolCallId', '2:output', '3:isError', '4:error', '5:attempts', '6:durationMs', '7:resolvedToolName', '8:truncated', '9:resultHandle', '10:idempotentReplay', '11:cached', '12:warnings',
    ]);
    expect(fieldList(ToolErrorSchema)).toEqual(['1:kind', '2:message', '3:recoverable', '4:suggestion', '5:retryAfterMs']);
  });

  it('writes exactly the bytes toBinary writes, for arbitrary responses', () => {
    fc.assert(
      fc.property(fc.array(toolResult, { maxLength: 5 }), (inits) => {
        const response = create(DispatchResponseSchema, {
          results: inits.map(({ error, ...rest }) => create(ToolResultSchema, { ...rest, error: error && create(ToolErrorSchema, error) })),
        });
        expect(encodeDispatchResponse(response)).toEqual(Buffer.from(toBinary(DispatchResponseSchema, response)));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves numbers that do not fit their fields to toBinary, which refuses them', () => {
    const response = create(DispatchResponseSchema, { results: [create(ToolResultSchema, { attempts: -1 })] });
    expect(() => encodeDispatchResponse(response)).toThrow();
  });
});
