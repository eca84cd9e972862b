import { redactSecrets } from '../../src/middleware';
import type { ToolRoute } from '../helpers/servers';
import { startToolApp, type ToolApp } from './redaction-service';

// Found in review: a URL whose password has no user before it (redis://:PASSWORD@host, the form
// Redis, its clients and dispatch's own --redis take) kept its password: the URL pattern wanted a
// user of one character at least.
test.each<[string, string, string]>([
  ['a Redis URL', 'REDIS_URL=redis://:s3cretpassword@redis-master:6379/0', 'REDIS_URL=redis://:[REDACTED:secret]@redis-master:6379/0'],
  ['a TLS Redis URL in JSON', '{"url":"rediss://:Xk9#pL2vQ@cache.internal:6380"}', '{"url":"rediss://:[REDACTED:secret]@cache.internal:6380"}'],
  // PHP's escaped slashes, in JSON cut short (read as text, not as JSON).
  ['an escaped URL', '{"broker":"amqp:\\/\\/:guestpass1@rabbit\\/vhost","queues":[{"id', '{"broker":"amqp:\\/\\/:[REDACTED:secret]@rabbit\\/vhost","queues":[{"id'],
])('redacts %s', (_what, input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test.each([
  ['a usage line', 'redis://[:password@]host:port/db'],
  ['an IPv6 host', 'http://[::1]:8080/health'],
  ['a URL without credentials', 'see https://example.com:8443/a@b for details'],
])('keeps %s', (_what, text) => {
  expect(redactSecrets(text)).toBe(text);
});

describe('through the gRPC service', () => {
  let d: ToolApp;
  beforeAll(async () => {
    const config: ToolRoute = (_req, res) => void res.writeHead(200).end('cache: redis://:s3cretpassword@redis-master:6379/0');
    d = await startToolApp({ '/config': config }, (url) => `  - { name: get_config, effect: read_only, input_schema: '{"type":"object"}', http: { url: "${url}/config" } }`);
  });
  afterAll(() => d.close());

  test('the output the model reads holds no Redis password', async () => {
    const res = await d.app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 't', name: 'get_config', arguments: '{}' }] });
    expect(res.results[0]!.output).toBe('cache: redis://:[REDACTED:secret]@redis-master:6379/0');
  });
});
