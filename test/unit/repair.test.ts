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

  test('fixes an enum value within distance 2 of exactly one allowed value, case-insensitive too', () => {
    expect(repairArguments({ count: 1, units: 'metrc' }, schema).value).toEqual({ count: 1, units: 'metric' });
    expect(repairArguments({ count: 1, units: 'IMPERIAL' }, schema).value).toEqual({ count: 1, units: 'imperial' });
  });

  test('leaves a value with more than one possible repair alone', () => {
    const { value, repairs } = repairArguments({ count: 1, size: 'smll' }, schema);
    expect(value).toEqual({ count: 1, size: 'smll' });
    expect(repairs).toEqual([]);
  });

  test('never touches values that already fit, nor an integer that is not whole', () => {
    expect(repairArguments({ count: '2.5', note: '5' }, schema)).toEqual({ value: { count: '2.5', note: '5' }, repairs: [] });
  });

  test('keeps a required null (the call stays invalid)', () => {
    expect(repairArguments({ count: null }, schema).value).toEqual({ count: null });
  });
});
