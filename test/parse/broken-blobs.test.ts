import { callsOf } from './parse-helpers';

const CALL = '{"name":"save","arguments":{"path":"out.json"}}';
const x = (chars: number): string => 'x'.repeat(chars);
const rows = (chars: number): string => '{"id":1,"ok":true},'.repeat(Math.ceil(chars / 19));

/**
 * Broken data in prose, of about `chars` characters, each kind failing to parse only at its end,
 * with containers still open there: each of them, tried again from its own opening bracket, would
 * read the whole blob again.
 */
const BLOBS: readonly (readonly [string, (chars: number) => string])[] = [
  ['an unterminated string in nested objects', (n) => `{"a": {"b": {"c": {"d": "${x(n)}" oops`],
  ['an array of rows broken off', (n) => `{"rows": [${rows(n)} ...`],
  ['an array of rows ending in a broken row', (n) => `{"rows": [${rows(n)} {"id": oops`],
  ['an object missing its last value', (n) => `{"meta": {"blob": "${x(n)}", "size": }`],
  ['nesting past the depth limit', (n) => `${'{"a":'.repeat(Math.ceil(n / 5))} oops`],
];

describe('a bare call after broken data is found, whatever the size of the data', () => {
  it.each(BLOBS.flatMap(([label, blob]) => [1_000, 70_000, 1_000_000].map((chars) => [label, chars, blob] as const)))(
    '%s, %i characters',
    (_label, chars, blob) => {
      const text = `The data came back broken:\n${blob(chars)}\nSo I will save what I have: ${CALL}`;
      expect(text.length).toBeGreaterThan(chars);
      expect(callsOf(text)).toEqual([['save', '{"path":"out.json"}']]);
    },
  );
});

describe('passing over what a failed parse left open', () => {
  it('still does not take a call in the arguments of a broken call inside broken data', () => {
    const broken = '{"name":"send_email","arguments":{"to":{"name":"rm","arguments":{"path":"/"}},"body": }}';
    expect(callsOf(`{"data": [{"log": ${broken}, "more": oops\nRetrying: {"name":"ok","arguments":{}}`)).toEqual([['ok', '{}']]);
  });

  it('still finds a call that was complete inside the broken data', () => {
    const text = `{"rows": [${rows(100_000)} {"name":"save","arguments":{"path":"a"}}, {"id": oops\nthen ${CALL}`;
    expect(callsOf(text)).toEqual([
      ['save', '{"path":"a"}'],
      ['save', '{"path":"out.json"}'],
    ]);
  });
});
