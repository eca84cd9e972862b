import { refusalOf } from './refusal-of';

// Found trying the example tools as a user: `{"citty":"Paris"}` was refused with `missing required
// property "city"` and `unexpected property "citty"`, leaving the model to see the two are one. An
// unexpected property that is a near miss of one the schema declares and the call does not hold
// (as enum repair reads a near miss: one typo in one word, never its first letter, or other
// separators) now says which it may have meant. Only a hint: the call is still refused.

const refusal = refusalOf('weather', {
  type: 'object',
  properties: { city: { type: 'string' }, units: { type: 'string' }, max_price: { type: 'number' }, min_price: { type: 'number' }, country_code: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
});

test.each<[string, unknown, string]>([
  ['a typo in a required property', { citty: 'Paris' }, 'unexpected property "citty" (the schema allows no other properties; did you mean "city"?)'],
  ['a typo in an optional one', { city: 'Paris', unitz: 'metric' }, 'unexpected property "unitz" (the schema allows no other properties; did you mean "units"?)'],
  ['other separators', { city: 'Paris', countryCode: 'FR' }, 'unexpected property "countryCode" (the schema allows no other properties; did you mean "country_code"?)'],
])('%s', (_what, args, line) => {
  expect(refusal(args)).toContain(line);
});

test.each<[string, unknown]>([
  ['a name near none', { city: 'Paris', colour: 'red' }],
  ['a near property the call holds already', { city: 'Paris', citty: 'Lyon' }],
  ['a name near two properties (min_price and max_price)', { city: 'Paris', mix_price: 3 }],
  ['a first letter changed', { city: 'Paris', inits: 'metric' }],
  ['a very long name', { city: 'Paris', ['c'.repeat(300)]: 1 }],
])('no hint: %s', (_what, args) => {
  const message = refusal(args);
  expect(message).toContain('(the schema allows no other properties)');
  expect(message).not.toContain('did you mean');
});
