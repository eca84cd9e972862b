import { repairArguments } from '../../src/arguments';
import { startApp } from '../helpers/servers';

// A number or a boolean where the schema wants text (an id, a zip code, a year: `"zip": 12345`; or
// an XML-ish value that ParseToolCalls read as JSON, `<arg_value>12345</arg_value>`, for a tool it
// did not know) was refused on a lenient tool, where "12345" for an integer field was repaired:
// the model wrote the right text, and could not fix it. Repaired only where the text is certain: a
// safe integer and a boolean, never a fraction (1.5 may have been written 1.50) nor null (none).

const schema = { type: 'object', properties: { zip: { type: 'string' }, flag: { type: 'string' }, code: { type: 'string', enum: ['1', '2'] }, note: { type: ['string', 'null'] } } };

test.each([
  ['an integer', { zip: 12345 }, { zip: '12345' }, 'repaired /zip: 12345 -> "12345" (number to string)'],
  ['a negative integer', { zip: -7 }, { zip: '-7' }, 'repaired /zip: -7 -> "-7" (number to string)'],
  ['a boolean', { flag: true }, { flag: 'true' }, 'repaired /flag: true -> "true" (boolean to string)'],
])('%s where text is wanted becomes its text', (_what, sent, expected, line) => {
  const out = repairArguments(sent, schema);
  expect(out.value).toEqual(expected);
  expect(out.repairs).toEqual([line]);
});

test.each([
  ['a fraction (its written digits are not known)', { zip: 1.5 }],
  ['an integer past 2^53 (not kept exactly)', { zip: 2 ** 60 }],
  ['an object', { zip: { a: 1 } }],
])('%s is not repaired', (_what, sent) => {
  expect(repairArguments(sent, schema).repairs).toEqual([]);
});

test('null for a text field that allows null stays null; an enum of texts takes the integer as its text', () => {
  expect(repairArguments({ note: null }, schema)).toEqual({ value: { note: null }, repairs: [], refused: [] });
  expect(repairArguments({ code: 2 }, schema).value).toEqual({ code: '2' });
});

test('through Dispatch: a lenient tool gets the text, a strict tool refuses the number as before', async () => {
  const text = JSON.stringify({ type: 'object', properties: { zip: { type: 'string' } }, required: ['zip'] });
  const d = await startApp(`tools:
  - { name: lookup, effect: read_only, lenient_arguments: true, input_schema: '${text}', builtin: { name: echo } }
  - { name: strict_lookup, effect: read_only, input_schema: '${text}', builtin: { name: echo } }`);
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'a', name: 'lookup', arguments: '{"zip":12345}' }, { id: 'b', name: 'strict_lookup', arguments: '{"zip":12345}' }] });
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse(results[0]!.output)).toEqual({ zip: '12345' });
    expect(results[0]!.warnings).toContain('repaired /zip: 12345 -> "12345" (number to string)');
    expect(results[1]!.isError).toBe(true);
    expect(results[1]!.error?.message).toMatch(/\/zip/);
  } finally {
    await d.close();
  }
});
