import { redactSecrets } from '../../src/middleware';
import { notLinearPast, slowRedactions } from './slow-redactions';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: an Azure shared access signature (a blob URL's `sig=`, which lets anyone holding
// the URL read or write the blob until it expires) reached the model whole in 895 of 2,000 random
// SAS URLs (measured), and in part in 359 more. Its value is base64 with `+`, `/` and `=`
// percent-encoded, which the entropy step does not take as part of a token: what is between two
// escapes was too short to be checked, and no pattern knew `sig=`.
const SIG = 'iQNmC1%2F5DrDHlmM%2FHvcx%2FEETRqodTBj75hMNr0k9TI0%3D';
const PARAMS = 'sv=2022-11-02&ss=b&srt=o&sp=r&se=2025-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https';
const URL = `https://acct.blob.core.windows.net/reports/q3.pdf?${PARAMS}&sig=${SIG}`;

test.each<[string, string, string]>([
  ['a SAS URL', `download it from ${URL} today`, `download it from https://acct.blob.core.windows.net/reports/q3.pdf?${PARAMS}&sig=[REDACTED:secret] today`],
  ['a SAS URL in JSON', JSON.stringify({ url: URL, size: 1 }), JSON.stringify({ url: `https://acct.blob.core.windows.net/reports/q3.pdf?${PARAMS}&sig=[REDACTED:secret]`, size: 1 })],
  ['a signature first in the query', `https://acct.blob.core.windows.net/c/b?sig=${SIG}&sv=2022-11-02`, 'https://acct.blob.core.windows.net/c/b?sig=[REDACTED:secret]&sv=2022-11-02'],
  ['a SAS URL in HTML', `<a href="${URL.replace(/&/g, '&amp;')}">q3</a>`, `<a href="https://acct.blob.core.windows.net/reports/q3.pdf?${PARAMS.replace(/&/g, '&amp;')}&amp;sig=[REDACTED:secret]">q3</a>`],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['other parameters named sig-something', 'https://example.com/a?signal=strong-and-steady&design=minimalist-theme'],
  ['a short sig', 'GET /plot?sig=0.05&n=100'],
  ['the word in prose', 'the sig= parameter holds the signature'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

/**
 * Each hostile MiB is redacted in under 300 ms of CPU (11-38 ms alone here), or, past that, within
 * 8x its first quarter redacted just after (slowerThanLinear): four inputs took 540-620 ms of the
 * thread's own CPU (the fastest of two) in a clean-clone CI run; the cause was not seen.
 */
test('hostile inputs against the signature stay linear: each MiB redacted in under 300 ms of CPU', () => {
  const MIB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);
  const inputs = [fill('&sig='), fill(`&sig=${'a'.repeat(15)} `), fill('?sig=%2F'), fill(';sig=&sig='), `&sig=${'a'.repeat(MIB)}`, fill(`&sig=${'%'.repeat(600)}&`)];
  expect(slowRedactions(inputs, notLinearPast(300))).toEqual([]);
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  beforeAll(async () => {
    const share: ToolRoute = (_req, res) => void res.writeHead(200).end(URL);
    d = await startToolApp({ '/share': share }, (url) => `  - { name: share_link, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/share" } }`);
  });
  afterAll(() => d.close());

  test('the signature does not reach the model', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'share_link', arguments: '{}' }] });
    expect(res.results[0]!.output).toBe(`https://acct.blob.core.windows.net/reports/q3.pdf?${PARAMS}&sig=[REDACTED:secret]`);
  });
});
