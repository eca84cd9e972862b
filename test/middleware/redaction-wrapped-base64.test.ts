import { generateKeyPairSync } from 'node:crypto';
import { redactSecrets } from '../../src/middleware';
import { slowerThan } from '../helpers/cpu-time';

// Found by a corpus of non-secret tool outputs: GitHub's contents API returns a file as base64
// wrapped at 60 characters, and the entropy step redacted 83% of a README's lines, so an agent
// reading a file through it decoded garbage; a file holding a secret had fragments of it get
// through between the lines. Wrapped base64 of text is now redacted as the text it holds.

const README = Array.from({ length: 40 }, (_, i) => `## Section ${i}\n\nRun \`npm ci && npm test\` to check the build; see docs/guide-${i}.md for the details of step ${i}.\n`).join('\n');
const wrap = (text: string, width: number) => Buffer.from(text).toString('base64').replace(new RegExp(`.{${width}}`, 'g'), '$&\n') + '\n';
const contents = (text: string) => JSON.stringify({ name: 'README.md', path: 'README.md', sha: '3f786850e387550fdab836ed7e6dc881de23001b', size: text.length, encoding: 'base64', content: wrap(text, 60) }, null, 2);
const decoded = (json: string) => Buffer.from((JSON.parse(json) as { content: string }).content, 'base64').toString('utf8');

test("GitHub's contents of a file holding no secret come back whole", () => {
  const json = contents(README);
  expect(redactSecrets(json)).toBe(json);
});

test('base64 of a text wrapped at 76 (the base64 command) or 64 comes back whole', () => {
  for (const width of [76, 64]) expect(redactSecrets(wrap(README, width))).toBe(wrap(README, width));
});

test("GitHub's contents of a file holding secrets come back encoded again, the secrets redacted in it", () => {
  const env = `${README}\nDB_PASSWORD=hunter2\nGITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n`;
  const redacted = redactSecrets(contents(env));
  const text = decoded(redacted);
  expect(text).toContain('DB_PASSWORD=[REDACTED:secret]');
  expect(text).toContain('GITHUB_TOKEN=[REDACTED:');
  expect(text).not.toContain('hunter2');
  expect(text).not.toContain('ghp_0123');
  expect(text).toContain('## Section 39');
  // Wrapped at 60 again, as GitHub wraps it.
  expect((JSON.parse(redacted) as { content: string }).content.split('\n')[0]).toHaveLength(60);
});

// Whether the text pass changed anything decided whether the JSON pass ran at all: a key whose
// encoded lines the entropy step passed over (a slash too many, no digit: one key in a few) went
// out whole. Forty keys, so that one such is all but sure to be among them.
test('a private key encoded in base64 and wrapped is redacted in it, every time', () => {
  for (let i = 0; i < 40; i++) {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(decoded(redactSecrets(JSON.stringify({ content: wrap(pem, 76) })))).toBe('[REDACTED:private_key]\n');
  }
});

test('a MiB of wrapped base64 is redacted in linear time', () => {
  const big = (times: number): string => wrap(README.repeat(times), 60);
  const bad = (times: number): string => `${big(times).slice(0, -2)}!\n`;
  redactSecrets(big(1));
  // Past a second of CPU, held to 8x the same text a quarter as long (a quadratic one takes 16x).
  for (const text of [big, bad]) expect(slowerThan(() => redactSecrets(text(300)), () => redactSecrets(text(75)), 8, 1_000)).toBeUndefined();
});
