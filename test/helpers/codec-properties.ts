import fc from 'fast-check';

/**
 * The property every hand decoder keeps against protobuf-es, over arbitrary bytes: it throws
 * wherever `reference` (fromBinary, unknown fields stripped) throws, and where both accept they
 * make the same message. A hand decoder may refuse more (an unknown field bounded by its nested
 * message rather than the whole one), so where only it throws, the bytes pass.
 */
export function expectRefusesWhatFromBinaryRefuses<T>(decode: (bytes: Buffer) => T, reference: (bytes: Buffer) => T, known: (decoded: T) => T = (decoded) => decoded, maxLength = 40): void {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength }), (raw) => {
      const bytes = Buffer.from(raw);
      let expected: T;
      try {
        expected = reference(bytes);
      } catch {
        expect(() => decode(bytes)).toThrow();
        return;
      }
      let decoded: T;
      try {
        decoded = decode(bytes);
      } catch {
        return;
      }
      expect(known(decoded)).toStrictEqual(expected);
    }),
    { numRuns: 5000 },
  );
}

/** A message's fields as `number:localName`, to pin a hand codec's field list against the proto. */
export const fieldList = (schema: { fields: readonly { number: number; localName: string }[] }): string[] => schema.fields.map((f) => `${f.number}:${f.localName}`);
