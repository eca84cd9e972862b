import { repairArguments } from '../../src/arguments';

const schema = {
  type: 'object',
  properties: {
    count: { type: 'integer' },
    price: { type: 'number' },
    dry_run: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    filter: { type: 'object', properties: { city: { type: 'string' } } },
    units: { type: 'string', enum: ['metric', 'imperial'] },
    size: { type: 'string', enum: ['small', 'smell'] },
    note: { type: 'string' },
  },
  required: ['count'],
};

describe('argument repair', () => {
  test('coerces strings to integer, number and boolean', () => {
    const { value, repairs } = repairArguments({ count: '3', price: '2.5', dry_run: 'TRUE' }, schema);
    expect(value).toEqual({ count: 3, price: 2.5, dry_run: true });
    expect(repairs).toEqual([
      'repaired /count: "3" -> 3 (string to number)',
      'repaired /price: "2.5" -> 2.5 (string to number)',
      'repaired /dry_run: "TRUE" -> true (string to boolean)',
    ]);
  });

  test('wraps a bare value, decodes JSON text, drops null for an optional field', () => {
    const { value, repairs } = repairArguments({ count: 1, tags: 'red', filter: '{"city":"Oslo"}', note: null }, schema);
    expect(value).toEqual({ count: 1, tags: ['red'], filter: { city: 'Oslo' } });
    expect(repairs).toHaveLength(3);
  });

  test('fixes an enum value a few edits from exactly one allowed value, case-insensitive too', () => {
    expect(repairArguments({ count: 1, units: 'metrc' }, schema).value).toEqual({ count: 1, units: 'metric' });
    expect(repairArguments({ count: 1, units: 'IMPERIAL' }, schema).value).toEqual({ count: 1, units: 'imperial' });
  });

  // The review's cases: within 2 edits of exactly one value, each became another valid answer.
  test.each([
    ['"ok" for yes/no', ['yes', 'no'], 'ok'],
    ['"on" for yes/no', ['yes', 'no'], 'on'],
    ['"y" for yes/no', ['yes', 'no'], 'y'],
    ['"on" for off/auto', ['off', 'auto'], 'on'],
    ['"of" for on/off', ['on', 'off'], 'of'],
    ['"pt" for put/delete (1 edit, but half the word)', ['put', 'delete'], 'pt'],
    ['"rite_" for write/append (2 edits of a 5-letter word)', ['write', 'append'], 'rite_'],
  ])('never turns a short word into another word: %s', (_label, allowed, sent) => {
    const enumSchema = { type: 'object', properties: { choice: { type: 'string', enum: allowed } } };
    expect(repairArguments({ choice: sent }, enumSchema)).toEqual({ value: { choice: sent }, repairs: [], refused: [] });
  });

  test('never turns a short word into another word: "cax" for cat/car (as close to both), though both are named', () => {
    const enumSchema = { type: 'object', properties: { choice: { type: 'string', enum: ['cat', 'car'] } } };
    expect(repairArguments({ choice: 'cax' }, enumSchema)).toMatchObject({ value: { choice: 'cax' }, repairs: [] });
    expect(repairArguments({ choice: 'cax' }, enumSchema).refused).toEqual([
      '/choice: "cax" is not an allowed value; did you mean "cat" or "car"? (not corrected: it is as near to each)',
    ]);
  });

  test.each([
    ['one edit of a 3-letter word', ['yes', 'no'], 'yez', 'yes'],
    ['one edit of a 5-letter word', ['metric', 'imperial'], 'metrc', 'metric'],
    // A trailing `_` is a character of the value, not a separator between words (test/arguments/enum-near-miss).
    ['a letter missing in a 6-letter word', ['metric', 'imperial'], 'mtric', 'metric'],
    ['case only, any length', ['on', 'off'], 'ON', 'on'],
  ])('still fixes a misspelling: %s', (_label, allowed, sent, fixed) => {
    const enumSchema = { type: 'object', properties: { choice: { type: 'string', enum: allowed } } };
    expect(repairArguments({ choice: sent }, enumSchema).value).toEqual({ choice: fixed });
  });

  test('leaves a value with more than one possible repair alone', () => {
    const { value, repairs } = repairArguments({ count: 1, size: 'smll' }, schema);
    expect(value).toEqual({ count: 1, size: 'smll' });
    expect(repairs).toEqual([]);
  });

  test('never touches values that already fit, nor an integer that is not whole', () => {
    expect(repairArguments({ count: '2.5', note: '5' }, schema)).toEqual({ value: { count: '2.5', note: '5' }, repairs: [], refused: [] });
  });

  test('keeps a required null (the call stays invalid)', () => {
    expect(repairArguments({ count: null }, schema).value).toEqual({ count: null });
  });
});
