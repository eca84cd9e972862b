import { formatValidationErrors } from '../../src/arguments';
import { createSchemaCompiler } from '../../src/registry/schema-compiler';

// A validation message is bounded whatever the model sent (found in review): paths and property
// names are the model's own, and three unexpected keys of 300,000 characters made a 900 KB message.

const messageFor = (schema: object, data: unknown): string => {
  const { validate } = createSchemaCompiler(1 << 20).compile(JSON.stringify(schema));
  expect(validate(data)).toBe(false);
  return formatValidationErrors(validate.errors ?? []);
};

const long = 'k'.repeat(300_000);
const cut = `${'k'.repeat(200)}...`;
/** A path of one long key, cut: its `/` counts. */
const cutPath = `/${'k'.repeat(199)}...`;

test('names the path, the value and the expected fragment', () => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  expect(messageFor(schema, { city: ['Oslo'] })).toBe('invalid arguments: /city: got ["Oslo"] (array); must be string; expected {"type":"string"}');
  expect(messageFor(schema, { town: 'Oslo' })).toBe('invalid arguments: /: missing required property "city"; /: unexpected property "town" (the schema allows no other properties)');
});

test('cuts unexpected property names at 200 characters', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
  const line = () => `/: unexpected property "${cut}" (the schema allows no other properties)`;
  expect(messageFor(schema, { [`${long}1`]: 1, [`${long}2`]: 2, [`${long}3`]: 3 })).toBe(`invalid arguments: ${[1, 2, 3].map(line).join('; ')}`);
});

test('cuts a missing property name and a path at 200 characters', () => {
  expect(messageFor({ type: 'object', required: [long] }, {})).toBe(`invalid arguments: /: missing required property "${cut}"`);
  const nested = { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } };
  expect(messageFor(nested, { [long]: { a: 1 } })).toBe(`invalid arguments: ${cutPath}: got 1 (number); must be string; expected {"type":"string"}`);
});

test('cuts the lines together at 2,000 characters, before the count of errors not shown', () => {
  const described = { type: 'string', description: 'd'.repeat(500) };
  const nested = { type: 'object', additionalProperties: { type: 'object', properties: { a: described } } };
  const data = Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`${long}${n}`, { a: 1 }]));
  const message = messageFor(nested, data);
  expect(message).toHaveLength('invalid arguments: '.length + 2_000 + '...'.length + ' (and 1 more)'.length);
  expect(message.startsWith(`invalid arguments: ${cutPath}: got 1 (number); must be string; expected {"type":"string","description":"ddd`)).toBe(true);
  expect(message.endsWith('... (and 1 more)')).toBe(true);
});
