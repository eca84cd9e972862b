import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { ToolStats } from '../../gen/dispatch/v1/registry_pb';
import type { Logger } from '../../src/log';
import { json, startApp, type ToolRoute } from '../helpers/servers';
import { parsePrometheus, type Scrape } from './prometheus-text';

/** The full app with metrics on 127.0.0.1:0, and a scrape of its real `/metrics` endpoint. */
export type MetricsApp = Awaited<ReturnType<typeof startApp>> & {
  readonly metricsPort: number;
  scrape(): Promise<Scrape>;
};

/** The `auth.tokens` entry of a bearer token, as the config holds it (its SHA-256). */
export const tokenEntry = (tenant: string, token: string, scopes: readonly string[]) =>
  `    - { tenant: ${tenant}, scopes: [${scopes.join(', ')}], sha256: ${createHash('sha256').update(token).digest('hex')} }\n`;

/** Call options that send `token` as the bearer. */
/** A config of tenant acme (token tok-acme) with one tool, lookup (a city required), and the `telemetry:` mapping given. */
export const lookupConfig = (telemetry: string) => `
telemetry: ${telemetry}
auth:
  tokens:
${tokenEntry('acme', 'tok-acme', ['dispatch'])}tools:
  - name: lookup
    effect: read_only
    input_schema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'
    builtin: { name: echo }
`;

export const bearer = (token: string) => ({ metadata: { authorization: `Bearer ${token}` } });

/** A silent logger that remembers the port of the app's `metrics serving` line, and a scrape of it. */
export function metricsPortLogger(): { readonly logger: Logger; port(): number; scrape(): Promise<Scrape> } {
  let metricsPort = 0;
  const logger: Logger = {
    debug() {},
    info(message, fields) {
      if (message === 'metrics serving') metricsPort = Number(fields?.port);
    },
    warn() {},
    error() {},
  };
  return {
    logger,
    port: () => metricsPort,
    async scrape() {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
      return parsePrometheus(await response.text());
    },
  };
}

/** Starts the app from YAML with `--metrics-listen 127.0.0.1:0`; the port is read from its log. */
export async function startMetricsApp(yaml: string): Promise<MetricsApp> {
  const metrics = metricsPortLogger();
  const app = await startApp(yaml, { logger: metrics.logger, metricsListen: '127.0.0.1:0' });
  return { ...app, metricsPort: metrics.port(), scrape: metrics.scrape };
}

/** GET /metrics on a connection of its own, closed after it (fetch would keep one open); rejects on any status but 200. */
export const scrapeOnce = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString()) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });

/** Routes of the tools {@link expectSixAlerts} reads: weather, slow (300 ms), crashy (not JSON), big (1,000 characters), send. */
export const sixRateRoutes = (): Record<string, ToolRoute> => ({
  '/weather': json({ temp: 20 }),
  '/slow': json({ late: true }, 300),
  '/crashy': (_req, res) => void res.writeHead(200).end('this is not json'),
  '/big': (_req, res) => void res.writeHead(200).end('x'.repeat(1000)),
  '/send': json({ sent: true }),
});

/**
 * The alert of each of the six rates, for calls of: weather (3, one invalid), slow (1, timed out
 * and retried), crashy (1, a non-JSON answer), big (1, bounded) and send (2, the second replayed).
 */
export function expectSixAlerts(byTool: Readonly<Record<string, ToolStats>>): void {
  expect(byTool.weather!.alerts).toEqual(['validation_failure: 33.3% > 15%']);
  expect(byTool.slow!.rates).toMatchObject({ timeout: 1, retry: 1, unexpectedException: 0 });
  expect(byTool.slow!.alerts).toEqual(['timeout: 100% > 5%', 'retry: 100% > 10%', 'error: 100% > 50%']);
  expect(byTool.crashy!.alerts).toEqual(['unexpected_exception: 100% > 0%', 'error: 100% > 50%']);
  // The error rate: calls that ended in an error of any kind (the invalid one of three).
  expect(byTool.weather!.rates!.error).toBeCloseTo(1 / 3);
  expect(byTool.send!.rates!.error).toBe(0);
  expect(byTool.big!.alerts).toEqual(['result_bounding: 100% > 20%']);
  expect(byTool.send!.rates!.idempotentHit).toBe(0.5);
  expect(byTool.send!.alerts).toEqual(['idempotent_hit: 50% > 5%']);
}
