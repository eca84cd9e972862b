import { redactSecrets } from '../../src/middleware';

// Found by a corpus of generated credentials: a webhook URL whose path is the credential (the
// entropy step keeps a path) and tokens told by their prefix whose body is hex (kept as a hash)
// or holds no digit (Hugging Face's, one in six) reached the model whole, every time.

/** A deterministic generator of random characters (a linear congruential one), so a failure repeats. */
function characters(seed: number): (alphabet: string, n: number) => string {
  let state = seed;
  return (alphabet, n) =>
    Array.from({ length: n }, () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return alphabet[(state >>> 16) % alphabet.length]!;
    }).join('');
}

const HEX = '0123456789abcdef';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BASE64URL = `${BASE62}_-`;
const LETTERS = BASE62.slice(0, 52);

const formats = (pick: ReturnType<typeof characters>): Array<[string, string]> => [
  ['RubyGems', `rubygems_${pick(HEX, 48)}`],
  ['Shippo', `shippo_live_${pick(HEX, 40)}`],
  ['Pulumi', `pul-${pick(HEX, 40)}`],
  ['Postman', `PMAK-${pick(HEX, 24)}-${pick(HEX, 34)}`],
  ['Mailgun', `key-${pick(HEX, 32)}`],
  ['Hugging Face, letters only', `hf_${pick(LETTERS, 34)}`],
  ['Square', `sq0atp-${pick(BASE64URL, 22)}`],
  ['Square application secret', `sq0csp-${pick(BASE64URL, 43)}`],
  ['npm, letters only', `npm_${pick(LETTERS, 36)}`],
  ['Google OAuth client secret, letters only', `GOCSPX-${pick(LETTERS, 28)}`],
  ['New Relic user key, letters only', `NRAK-${pick(LETTERS.slice(0, 26), 27)}`],
];

describe.each([1, 2, 3])('tokens told by their prefix (seed %i)', (seed) => {
  test.each(formats(characters(seed)))('%s, in prose, after a variable and in JSON', (_name, token) => {
    expect(redactSecrets(`the key is ${token} (rotate it)`)).toBe('the key is [REDACTED:api_key] (rotate it)');
    expect(redactSecrets(`export VALUE=${token}`)).toBe('export VALUE=[REDACTED:api_key]');
    expect(redactSecrets(JSON.stringify({ value: token, n: 1 }))).toBe('{"value":"[REDACTED:api_key]","n":1}');
  });
});

describe.each([1, 2, 3])('webhook URLs (seed %i)', (seed) => {
  const pick = characters(seed);
  const guid = () => `${pick(HEX, 8)}-${pick(HEX, 4)}-${pick(HEX, 4)}-${pick(HEX, 4)}-${pick(HEX, 12)}`;
  test.each<[string, string, string]>([
    ['Discord', `https://discord.com/api/webhooks/${pick('0123456789', 19)}/${pick(BASE64URL, 68)}`, 'https://discord.com/api/webhooks/'],
    ['Discord, versioned, old host', `https://discordapp.com/api/v10/webhooks/${pick('0123456789', 18)}/${pick(BASE64URL, 68)}`, 'https://discordapp.com/api/v10/webhooks/'],
    ['Teams', `https://contoso.webhook.office.com/webhookb2/${guid()}@${guid()}/IncomingWebhook/${pick(HEX, 32)}/${guid()}/V2${pick(BASE64URL, 43)}`, 'https://contoso.webhook.office.com/webhookb2/'],
    ['Teams, the older host', `https://outlook.office.com/webhook/${guid()}@${guid()}/IncomingWebhook/${pick(HEX, 32)}/${guid()}`, 'https://outlook.office.com/webhook/'],
    ['Zapier', `https://hooks.zapier.com/hooks/catch/${pick('0123456789', 7)}/${pick('abcdefghijklmnopqrstuvwxyz0123456789', 6)}/`, 'https://hooks.zapier.com/hooks/catch/'],
    ['IFTTT', `https://maker.ifttt.com/trigger/door_opened/with/key/${pick(BASE64URL, 22)}`, 'https://maker.ifttt.com/trigger/door_opened/with/key/'],
  ])('%s: the host and fixed words stay', (_name, url, kept) => {
    const redacted = redactSecrets(`curl -X POST ${url} -d @message.json`);
    expect(redacted.startsWith(`curl -X POST ${kept}[REDACTED:webhook]`)).toBe(true);
    expect(redactSecrets(JSON.stringify({ url }))).toContain(`${kept}[REDACTED:webhook]`);
  });
});

test.each<[string, string]>([
  ["Sentry's DSN, public by design (it only lets events be sent)", 'SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o123456.ingest.sentry.io/1234567'],
  ["Square's application id, public", 'sq0idp-AbCdEfGhIjKlMnOpQrStUv'],
  ["Discord's documentation of webhooks", 'see https://discord.com/developers/docs/resources/webhook and POST https://discord.com/api/webhooks/{webhook.id}/{webhook.token}'],
  ['a Teams webhook placeholder', 'TEAMS_WEBHOOK_URL=https://contoso.webhook.office.com/webhookb2/...'],
  ["npm's configuration variables", 'npm_config_cache=/root/.npm npm_config_user_agent=npm/10.8.2'],
  ["Hugging Face's functions", 'from huggingface_hub import hf_hub_download, hf_hub_url'],
  ['a file named by a hash in a path', 'GET /static/key-0123456789abcdef0123456789abcdef.png 200'],
  ['a hash under an id key', '{"id":"key-0123456789abcdef0123456789abcdef"}'],
  ['a prefix one character short', 'key-0123456789abcdef0123456789abcde'],
  ['a prefix inside a longer name', 'api-key-0123456789abcdef0123456789abcdef'],
])('kept: %s', (_name, text) => {
  expect(redactSecrets(text)).toBe(text);
});
