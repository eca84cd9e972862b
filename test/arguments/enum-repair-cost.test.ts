import { repairArguments } from '../../src/arguments/repair';
import { MAX_ENUM_COMPARISONS } from '../../src/arguments/enum-index';
import { slowerThan } from '../helpers/cpu-time';

// Lenient repair looks for an enum value a refused string misspells. Each refused value was
// compared with every allowed string, its words read again each time: 1,000 items against an enum
// of 10,000 strings took 42 s of the event loop every tenant shares (found in review).

const allowed = Array.from({ length: 10_000 }, (_, i) => `value_${i}_word`);
const schema = { type: 'object', properties: { xs: { type: 'array', items: { type: 'string', enum: allowed } } } };

test('1,000 refused items against an enum of 10,000 strings cost a bounded number of comparisons, and the refusal says some went unchecked', () => {
  const xs = Array.from({ length: 1_000 }, (_, i) => `nothing_${i}_like`);
  let result: ReturnType<typeof repairArguments> | undefined;
  // Past 3 s of CPU, held to 8x the same items against an enum of 100 strings (as many comparisons
  // as the budget now; a hundredth of the work before).
  const few = { type: 'object', properties: { xs: { type: 'array', items: { type: 'string', enum: allowed.slice(0, 100) } } } };
  expect(slowerThan(() => (result = repairArguments({ xs }, schema)), () => repairArguments({ xs }, few), 8, 3_000)).toBeUndefined();
  expect(result!.repairs).toEqual([]);
  expect(result!.refused).toContain(`enum values past ${MAX_ENUM_COMPARISONS} comparisons with allowed values were not checked for misspellings`);
});

test('within the budget a misspelling of one of 10,000 values is still corrected, and a value differing in case only always is', () => {
  const result = repairArguments({ xs: ['valu_5_word', 'VALUE_7_WORD'] }, schema);
  expect(result.value).toEqual({ xs: ['value_5_word', 'value_7_word'] });
  expect(result.refused).toEqual([]);
});

test('past the budget, a later misspelling is left as sent (never corrected from a partial look), a case difference still fixed', () => {
  const xs = [...Array.from({ length: 10 }, (_, i) => `nothing_${i}_like`), 'valu_5_word', 'Value_9_Word'];
  const result = repairArguments({ xs }, schema);
  expect((result.value as { xs: string[] }).xs.slice(10)).toEqual(['valu_5_word', 'value_9_word']);
});
