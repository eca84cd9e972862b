import { httpClientAttributes } from '../../src/events/http-client-attributes';
import { redactedUrl } from '../../src/events';

// `url.full` on HTTP tools' attempt spans (1fa2cda) redacted credentials and query values, but kept
// the path, and a Slack, Discord or Telegram webhook's URL is its secret: every span exported to the
// tracing backend carried it. The path was then redacted as results are (redactSecrets), which a
// security review found leaves tokens of no known pattern (`/hooks/3f9a...`, a UUID): the path past
// its first segment is now REDACTED, as ListTools shows an operator's tool, and the first segment
// (with the host) is redacted as results are.

test.each([
  ['a Slack webhook', 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'https://hooks.slack.com/services/REDACTED'],
  ['a Discord webhook', 'https://discord.com/api/webhooks/123456789012345678/abcDEFghiJKLmnopQRStuvWXyz0123456789abcdefGHIJKLmnopQRstu', 'https://discord.com/api/REDACTED'],
  ['a Telegram bot token', 'https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage', 'https://api.telegram.org/bot123456789:[REDACTED:high_entropy]/REDACTED'],
])('%s in the path is redacted', (_what, url, shown) => {
  expect(redactedUrl(url)).toBe(shown);
  expect(httpClientAttributes(url)).toMatchObject({ 'url.full': shown, 'server.address': new URL(url).hostname, 'server.port': 443 });
});

test.each([
  ['a token of no known pattern', 'http://127.0.0.1:18181/echo/SuperSecretToolCredential_9f8e7d6c5b4a', 'http://127.0.0.1:18181/echo/REDACTED'],
  ['a hex hook token', 'https://hooks.example.com/hooks/3f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c9c2e', 'https://hooks.example.com/hooks/REDACTED'],
  ['a UUID', 'https://example.com/webhook/6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', 'https://example.com/webhook/REDACTED'],
])('%s past the first segment is REDACTED', (_what, url, shown) => expect(redactedUrl(url)).toBe(shown));

test('credentials and query values are REDACTED; the path past its first segment too; one segment is kept', () => {
  expect(redactedUrl('http://u:p@127.0.0.1:8080/v1/weather/paris?key=abc&q#frag')).toBe('http://REDACTED:REDACTED@127.0.0.1:8080/v1/REDACTED?key=REDACTED&REDACTED');
  expect(redactedUrl('https://api.example.com/run')).toBe('https://api.example.com/run');
  expect(redactedUrl('https://api.example.com/')).toBe('https://api.example.com');
});
