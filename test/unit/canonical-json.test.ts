import fc from 'fast-check';
import { canonicalJson } from '../../src/json';
import { sortedByHand } from '../../src/json/canonical-json';
import { idempotencyKey } from '../../src/store';

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  entries.sort((a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 31 + seed) % 7) || (seed % 2 ? 1 : -1));
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, seed + 1)]));
}

const handMadeCanonicalJson = sortedByHand;

describe('canonical JSON', () => {
  test('property: the same text as the hand-made sort, so keys already stored stay valid', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(handMadeCanonicalJson(value));
      }),
      { numRuns: 500 },
    );
    const parsed: unknown = JSON.parse('{"__proto__":{"b":1,"a":2},"10":1,"9":[{"y":1,"x":null}],"":0,"é":1,"e":-0}');
    expect(canonicalJson(parsed)).toBe(handMadeCanonicalJson(parsed));
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe(handMadeCanonicalJson({ a: undefined, b: [undefined, 1] }));
    // Values already in sorted order take JSON.stringify's own path: the same text.
    // Array-index keys enumerate first whatever the order (sorted by hand); so do keys not quite indexes.
    for (const text of ['{"b":1,"10":2,"a":{"2":1,"1":0}}', '{"b":[{"4294967295":1,"4294967294":2}],"a":{"01":1,"-1":2,"1.5":3}}', '{"z":{"y":1,"x":{"w":[{"v":1,"u":2}]}},"a":0}']) {
      const value: unknown = JSON.parse(text);
      expect(canonicalJson(value)).toBe(handMadeCanonicalJson(value));
    }
    for (const text of ['{"a":1,"b":{"c":[{"d":1,"e":"é"}],"z":null}}', '{"2":1,"10":2}', '{"10":1,"2":{"b":1,"a":0}}', '[{"a":1},{"b":2,"a":1}]', '{"":0,"a":[]}']) {
      const value: unknown = JSON.parse(text);
      expect(canonicalJson(value)).toBe(handMadeCanonicalJson(value));
    }
  });

  test('values with many distinct keys give the same text', () => {
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 17) % 40}`, { [`n${39 - i}`]: i }]));
    expect(canonicalJson(wide)).toBe(handMadeCanonicalJson(wide));
    expect(canonicalJson([wide, { __proto__x: 1, b: 2, a: 1 }])).toBe(handMadeCanonicalJson([wide, { __proto__x: 1, b: 2, a: 1 }]));
  });

  test('sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
  });

  test('property: key order never changes the text nor the idempotency key', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 1000 }), (value, seed) => {
        const shuffled = shuffleKeys(value, seed);
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value));
        const scope = { tenant: 't', sessionId: 's' };
        expect(idempotencyKey(scope, 'tool', shuffled, [])).toBe(idempotencyKey(scope, 'tool', value, []));
      }),
    );
  });

  test('key_fields select what the key is made of', () => {
    const scope = { tenant: 't', sessionId: 's' };
    const a = idempotencyKey(scope, 'send', { to: 'x', subject: 'hi', body: 'one' }, ['/to', '/subject']);
    const b = idempotencyKey(scope, 'send', { body: 'two', subject: 'hi', to: 'x' }, ['/to', '/subject']);
    expect(a).toBe(b);
    expect(idempotencyKey({ tenant: 'other', sessionId: 's' }, 'send', { to: 'x', subject: 'hi' }, ['/to', '/subject'])).not.toBe(a);
  });
});
