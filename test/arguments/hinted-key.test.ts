import { hintedKey } from '../../src/arguments/hinted-key';
import { refusalOf } from './refusal-of';
import { slowerThan } from '../helpers/cpu-time';

// A search tool refused `{"qurey": "..."}` with `unexpected property "qurey"` and no hint (a
// probe's finding): the hint read near misses as repairs do, which take no swapped letters and
// at most one typo, as they rename without asking. A refusal's hint renames nothing (the model
// reads it and calls again), so it takes a swap as one edit, and two edits in longer names; still
// one property only, never the first letter, never one the call holds.

const refusal = refusalOf('search', {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer' }, language: { type: 'string' }, max_price: { type: 'number' }, min_price: { type: 'number' } },
  required: ['query'],
  additionalProperties: false,
});

test.each<[string, unknown, string]>([
  ['two letters swapped', { qurey: 'cats' }, 'qurey" (the schema allows no other properties; did you mean "query"?)'],
  ['two letters swapped after the first', { qeury: 'cats' }, 'qeury" (the schema allows no other properties; did you mean "query"?)'],
  ['a swap in a short name', { query: 'cats', lmiit: 3 }, 'lmiit" (the schema allows no other properties; did you mean "limit"?)'],
  ['two edits in a long name', { query: 'cats', langauge: 'fr' }, 'langauge" (the schema allows no other properties; did you mean "language"?)'],
  ['case aside', { query: 'cats', Lmiit: 3 }, 'Lmiit" (the schema allows no other properties; did you mean "limit"?)'],
])('a hint: %s', (_what, args, line) => {
  const message = refusal(args);
  expect(message).toContain(line);
  // Only a hint: nothing was renamed, the call is refused.
  expect(message).not.toBe('accepted');
});

test.each<[string, unknown]>([
  ['two edits in a short name', { query: 'cats', lmt: 3 }],
  ['a first letter changed', { query: 'cats', kimit: 3 }],
  ['as near two properties', { query: 'cats', mix_price: 3 }],
  ['the property meant is held already', { query: 'cats', qurey: 'dogs' }],
  ['a name under three letters', { query: 'cats', li: 3 }],
])('no hint: %s', (_what, args) => {
  const message = refusal(args);
  expect(message).toContain('(the schema allows no other properties)');
  expect(message).not.toContain('did you mean');
});

test('its cost is bounded: 1,000 properties of 64 characters (200 read), 5 unexpected names, in well under 200 ms of CPU', () => {
  const declared = Array.from({ length: 1_000 }, (_, i) => `${String(i).padStart(4, '0')}${'x'.repeat(60)}`);
  const hint = (names: readonly string[]): void => {
    for (let i = 0; i < 5; i++) hintedKey(`0${'y'.repeat(63)}`, names, {});
  };
  // Past 200 ms, held to 8x the first 50 properties (a quarter of the work now; a twentieth before).
  expect(slowerThan(() => hint(declared), () => hint(declared.slice(0, 50)), 8, 200)).toBeUndefined();
});
