import { httpClientAttributes } from '../../src/events/http-client-attributes';
import { redactedUrl } from '../../src/events';

// `url.full` on HTTP tools' attempt spans (1fa2cda) redacted credentials and query values, but kept
// the path, and a Slack, Discord or Telegram webhook's URL is its secret: every span exported to the
// tracing backend carried it. The path is now redacted as results are (redactSecrets).

test.each([
  ['a Slack webhook', 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'https://hooks.slack.com/services/[REDACTED:slack_token]'],
  ['a Discord webhook', 'https://discord.com/api/webhooks/123456789012345678/abcDEFghiJKLmnopQRStuvWXyz0123456789abcdefGHIJKLmnopQRstu', 'https://discord.com/api/webhooks/[REDACTED:webhook]'],
  ['a Telegram bot token', 'https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage', 'https://api.telegram.org/bot123456789:[REDACTED:high_entropy]'],
])('%s in the path is redacted', (_what, url, shown) => {
  expect(redactedUrl(url)).toBe(shown);
  expect(httpClientAttributes(url)).toMatchObject({ 'url.full': shown, 'server.address': new URL(url).hostname, 'server.port': 443 });
});

test('an ordinary path, credentials and query are as before', () => {
  expect(redactedUrl('http://u:p@127.0.0.1:8080/v1/weather/paris?key=abc&q#frag')).toBe('http://REDACTED:REDACTED@127.0.0.1:8080/v1/weather/paris?key=REDACTED&REDACTED');
  expect(redactedUrl('https://api.example.com/v1/run')).toBe('https://api.example.com/v1/run');
});
