import { connect, type Socket } from 'node:net';
import { json, startToolServer, type ToolServer } from '../helpers/servers';
import { scrapeOnce, startMetricsApp, type MetricsApp } from './metrics-app';
import { parsePrometheus } from './prometheus-text';

// telemetry.scrape_cache_ms and telemetry.max_scrape_connections reach the metrics endpoint of
// the app started from the config file (MetricsOptions.scrapeCacheMs, maxScrapeConnections).

let tools: ToolServer;
let d: MetricsApp;

beforeAll(async () => {
  tools = await startToolServer({ '/weather': json({ temp: 20 }) });
  d = await startMetricsApp(`
telemetry: { scrape_cache_ms: 60000, max_scrape_connections: 1 }
tools:
  - { name: weather, effect: read_only, memoize_ttl_seconds: 0, input_schema: '{"type":"object"}', http: { url: "${tools.url}/weather" } }
`);
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});

const calls = async () => parsePrometheus(await scrapeOnce(d.metricsPort)).value('dispatch_tool_calls_total', { tenant: 'default', tool: 'weather', outcome: 'ok' }) ?? 0;

test('scrape_cache_ms: a scrape within it is served the rendering before the call that came since', async () => {
  await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'weather', arguments: '{}' }] });
  const before = await calls();
  expect(before).toBe(1);
  await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c2', name: 'weather', arguments: '{"city":"Oslo"}' }] });
  expect(await calls()).toBe(1);
});

test('max_scrape_connections: a scrape past it closes the connection held without a request', async () => {
  const held: Socket = connect(d.metricsPort, '127.0.0.1');
  try {
    await new Promise((resolve) => held.once('connect', resolve));
    const closed = new Promise((resolve) => held.once('close', resolve));
    await new Promise((r) => setTimeout(r, 50));
    // Served: still the rendering of the first test, within scrape_cache_ms.
    expect(await calls()).toBe(1);
    await closed;
  } finally {
    held.destroy();
  }
});
