import type { SecretPattern } from './secret-patterns';

/**
 * Token formats told by their prefix, whose body the entropy step keeps: hex, which it keeps as a
 * hash, or an alphabet too short or of letters alone. Each alternative is bounded and ends where
 * its format ends; the pattern that joins them (secret-patterns.ts, `api_key`) starts each only
 * where a run of token characters starts. The first six here; the others {@link PREFIXED_TOKENS}.
 * - OpenAI's and Anthropic's `sk-`, Stripe's secret and restricted keys (`sk_live_`, `rk_test_`;
 *   not the publishable `pk_`), Google's `AIza`;
 * - GitLab's tokens (personal, deploy, runner, trigger): their prefix and 20 characters, too short
 *   for the entropy step;
 * - DigitalOcean's (`dop_v1_`, `doo_v1_`, `dor_v1_`), Shopify's (`shpat_`, `shpca_`, `shppa_`,
 *   `shpss_`), RubyGems' (`rubygems_`), Shippo's (`shippo_live_`), Pulumi's (`pul-`), Postman's
 *   (`PMAK-`) and Mailgun's (`key-`): their prefix and hex;
 * - Hugging Face's `hf_` and 34 letters or digits: one in six has no digit, which the entropy step
 *   asks for;
 * - Square's access token and application secret (`sq0atp-`, `sq0csp-`; not `sq0idp-`, the
 *   application's public id);
 * - npm's (`npm_`), Linear's (`lin_api_`), Stripe's webhook secrets (`whsec_`), Google's OAuth
 *   client secrets (`GOCSPX-`), Grafana's service accounts' (`glsa_`), New Relic's user keys
 *   (`NRAK-`), Atlassian's API tokens (`ATATT3`): base62 or base64, which the entropy step
 *   catches unless the body holds no digit (about one in 200).
 */
export const API_KEY_FORMATS = [
  'sk-[A-Za-z0-9_-]{20,512}',
  '[sr]k_(?:live|test)_[A-Za-z0-9]{16,512}',
  'AIza[A-Za-z0-9_-]{35}',
  'gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,255}',
  'do[opr]_v1_[a-f0-9]{64}',
  'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}',
].join('|');

/**
 * More of them, read by the entropy step (entropy.ts) in the runs of token characters it scans
 * anyway: a run that is one of these whole is redacted whatever its alphabet. As a pattern, their
 * prefixes (`key-`, `pul-`, `hf_`...), even in a scan of their own, cost every text 3-6% more to
 * redact (8 KB pages, logs, JSON and code), and 10-24% in the pre-check scan.
 */
const PREFIXED_TOKENS = new RegExp(
  '(?:' +
    [
      'rubygems_[a-f0-9]{48}',
      'shippo_(?:live|test)_[a-f0-9]{40}',
      'pul-[a-f0-9]{40}',
      'PMAK-[a-f0-9]{24}-[a-f0-9]{34}',
      'key-[a-f0-9]{32}',
      'hf_[A-Za-z0-9]{34}',
      'sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}',
      'npm_[A-Za-z0-9]{36}',
      'lin_api_[A-Za-z0-9]{40}',
      'whsec_[A-Za-z0-9+/=]{32,88}',
      'GOCSPX-[A-Za-z0-9_-]{28}',
      'glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}',
      'NRAK-[A-Z0-9]{27}',
      'ATATT3[A-Za-z0-9_=-]{180,256}',
    ].join('|') +
    ')',
  'y',
);

/** Length of the shortest of {@link PREFIXED_TOKENS}: Square's access token. */
export const PREFIXED_TOKEN_MIN_LENGTH = 29;

/** First characters of {@link PREFIXED_TOKENS}, by code, so most runs are passed over at their first character. */
const PREFIX_STARTS = new Uint8Array(128);
for (const c of 'rspPkhnlwGgNA') PREFIX_STARTS[c.charCodeAt(0)] = 1;

/** Whether the run of token characters `text[start, end)` is one of {@link PREFIXED_TOKENS}, whole (matched in place: no slice per run). */
export function isPrefixedToken(text: string, start: number, end: number): boolean {
  const first = text.charCodeAt(start);
  if (end - start < PREFIXED_TOKEN_MIN_LENGTH || first >= 128 || PREFIX_STARTS[first] !== 1) return false;
  PREFIXED_TOKENS.lastIndex = start;
  return PREFIXED_TOKENS.test(text) && PREFIXED_TOKENS.lastIndex === end;
}

/**
 * Webhook URLs whose path is the credential: whoever holds one posts as the integration. The entropy
 * step keeps a URL's path (a run starting with `/` is a path), so their tokens reached the model
 * whole. The host and the path's fixed words stay (one group per form, kept), the ids and the token
 * go:
 * - Discord's `discord.com/api/webhooks/{id}/{token}` (`discordapp.com`, a versioned `api/v10`);
 * - Microsoft Teams' incoming webhooks, `{tenant}.webhook.office.com/webhookb2/{group}@{tenant
 *   id}/IncomingWebhook/{hex}/{user}` and a trailing `/V2...` part, and the older
 *   `outlook.office.com/webhook/...`;
 * - Zapier's catch hooks, `hooks.zapier.com/hooks/catch/{account}/{hook}`;
 * - IFTTT's Maker key, `maker.ifttt.com/trigger/{event}/with/key/{key}`.
 * (Slack's incoming webhooks are the `slack_token` pattern's; a Power Automate URL's signature is
 * the URL pattern's `sig=`.) Every repetition is bounded; each form starts with its host's literal.
 */
export function webhookUrls(start: string): SecretPattern {
  const forms = [
    String.raw`(discord(?:app)?\.com\/api\/(?:v[0-9]{1,2}\/)?webhooks\/)[0-9]{15,22}\/[A-Za-z0-9_-]{40,128}`,
    String.raw`((?:webhook\.office\.com\/webhookb2|outlook\.office(?:365)?\.com\/webhook)\/)[0-9a-fA-F-]{36}@[0-9a-fA-F-]{36}\/IncomingWebhook\/[0-9a-fA-F]{32}(?:\/[A-Za-z0-9_-]{1,128}){0,2}`,
    String.raw`(hooks\.zapier\.com\/hooks\/catch\/)[0-9]{1,16}\/[A-Za-z0-9]{4,32}`,
    String.raw`(maker\.ifttt\.com\/trigger\/[^\s/?#]{1,64}\/(?:json\/)?with\/key\/)[A-Za-z0-9_-]{16,64}`,
  ];
  // Tried only on a text holding their paths' fixed words between slashes, a scan of its own: in the
  // pre-check scan they cost it 8-13% (git logs, lockfiles, minified code), the hosts' names more.
  const words = /\/(?:webhookb2|webhook|hooks\/catch|trigger|api(?:\/v[0-9]{1,2})?\/webhooks)\//;
  return { kind: 'webhook', regex: new RegExp(`${start}(?:${forms.join('|')})`, 'g'), keep: forms.length, loose: words.source, words };
}
