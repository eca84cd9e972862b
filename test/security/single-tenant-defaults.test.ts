import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import { buildApp, PLUGINS, type PluginFactory } from '../../src/app';
import { authPlugin } from '../../src/app/plugins/auth-plugin';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { resolveLimits } from '../../src/options';
import { telemetrySettings } from '../../src/telemetry';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';
import { startMetricsApp } from '../telemetry/metrics-app';
import { authYaml, startAuthApp, tokenEntriesYaml, type TestToken } from './support/auth-app';

// Without authentication every call is tenant `default` (the config file's tools' calls too), so
// the per-tenant shares of limits.max_answer_bytes_in_flight, max_argument_chars_in_flight and
// telemetry.max_label_pairs default to their whole totals: a fraction only took capacity from the
// one tenant there is. With authentication configured (inline tokens, or a tokens file as the Helm
// chart sets DISPATCH_AUTH_TOKENS_FILE) the fractions stay; a share set in the config always wins.

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ACME: TestToken = { token: 'tok-acme', tenant: 'acme', scopes: ['dispatch'] };

let tools: ToolServer;
const stalled: ServerResponse[] = [];
beforeAll(async () => {
  tools = await startToolServer({
    // 900 bytes, then nothing more until the test ends the response.
    '/stall': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('s'.repeat(900));
      stalled.push(res);
    },
    '/medium': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('m'.repeat(600)),
    '/slow': (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 1000),
  });
});
afterAll(async () => {
  for (const res of stalled) res.destroy();
  await tools?.close();
});

test("one tenant (no auth) reads answers up to the whole max_answer_bytes_in_flight, the config file's tools included", async () => {
  // 4,000 bytes in all: three stalled answers hold 2,700 and a 600-byte answer still fits. With a
  // quarter (1,000) for tenant `default`, the 2nd and 3rd stalled answers and the 600 bytes waited:
  // the last call's 800 ms timeout ran out (TIMEOUT).
  const tool = (name: string, timeoutMs: number) =>
    `  - { name: ${name}, effect: read_only, concurrency_safe: true, timeout_ms: ${timeoutMs}, retry: { max_attempts: 1 }, memoize_ttl_seconds: 0, http: { url: "${tools.url}/${name}" } }\n`;
  const app = await startApp(`limits: { max_answer_bytes_in_flight: 4000 }\ntools:\n${tool('stall', 8000)}${tool('medium', 800)}`);
  expect(app.app.deps.limits.maxAnswerBytesInFlightPerTenant).toBe(4000);
  const before = tools.count('/stall');
  const turns = Array.from({ length: 3 }, (_, i) => app.dispatch.dispatch({ sessionId: `stall${i}`, calls: [{ id: `s${i}`, name: 'stall', arguments: `{"i":${i}}` }] }).catch((e: unknown) => e));
  try {
    for (let i = 0; i < 50 && tools.count('/stall') < before + 3; i++) await sleep(20);
    expect(tools.count('/stall')).toBe(before + 3);
    await sleep(200); // their 900 bytes each arrive and are taken
    const started = Date.now();
    const medium = await app.dispatch.dispatch({ sessionId: 'look', calls: [{ id: 'm', name: 'medium', arguments: '{}' }] });
    expect(medium.results[0]).toMatchObject({ isError: false, output: 'm'.repeat(600) });
    expect(Date.now() - started).toBeLessThan(700);
  } finally {
    for (const res of stalled.splice(0)) res.destroy();
    await Promise.all(turns);
    await app.close();
  }
});

test('one tenant (no auth) runs turns holding up to the whole max_argument_chars_in_flight', async () => {
  // 4,000,000 characters in all: four turns of ~900,000 at once hold 3.6 M. With three quarters
  // (3,000,000) for tenant `default`, the fourth was refused RESOURCE_EXHAUSTED (code 8).
  const app = await startApp(`
limits: { max_argument_chars_in_flight: 4000000 }
tools:
  - { name: slow, effect: read_only, concurrency_safe: true, timeout_ms: 5000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
`);
  try {
    const big = 'y'.repeat(900_000);
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        app.dispatch
          .dispatch({ sessionId: `s${i}`, calls: [{ id: 'c', name: 'slow', arguments: JSON.stringify({ i, big }) }] })
          .then((r) => (r.results[0]!.isError ? 'error' : 'ok'), (e: ServiceError) => `code ${e.code}`),
      ),
    );
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok']);
  } finally {
    await app.close();
  }
});

test('one tenant (no auth) keeps the labels of up to the whole telemetry.max_label_pairs', async () => {
  // 4 pairs in all, 4 tools called by tenant `default`. With half (2) its last two calls folded
  // into `tenant="default", tool="_overflow"`.
  const names = ['t0', 't1', 't2', 't3'];
  const app = await startMetricsApp(`telemetry: { max_label_pairs: 4 }\ntools:\n${names.map((n) => `  - { name: ${n}, effect: read_only, builtin: { name: echo } }\n`).join('')}`);
  try {
    await app.dispatch.dispatch({ sessionId: 'pairs', calls: names.map((name) => ({ id: name, name, arguments: '{"text":"x"}' })) });
    const m = await app.scrape();
    const mine = m.samples.filter((s) => s.name === 'dispatch_tool_calls_total' && s.labels.tenant === 'default');
    expect(mine.map((s) => [s.labels.tool, s.value]).sort()).toEqual(names.map((n) => [n, 1]));
    expect(m.value('dispatch_tool_label_overflows_total')).toBe(0);
  } finally {
    await app.close();
  }
});

test('the defaults follow authentication: whole shares without it, the fractions with tokens inline or in a file from DISPATCH_AUTH_TOKENS_FILE; a share set always wins', async () => {
  const totals = 'max_answer_bytes_in_flight: 4000, max_argument_chars_in_flight: 4000';
  const shares = (limits: { maxAnswerBytesInFlightPerTenant: number; maxArgumentCharsInFlightPerTenant: number }) => [limits.maxAnswerBytesInFlightPerTenant, limits.maxArgumentCharsInFlightPerTenant];

  const open = await startApp(`limits: { ${totals} }\ntools: []`);
  const openSet = await startApp(`limits: { ${totals}, max_answer_bytes_in_flight_per_tenant: 1500, max_argument_chars_in_flight_per_tenant: 2500 }\ntools: []`);
  const inline = await startAuthApp(`${authYaml([ACME])}limits: { ${totals} }\ntools: []`);
  const dir = mkdtempSync(join(tmpdir(), 'single-tenant-'));
  const saved = process.env.DISPATCH_AUTH_TOKENS_FILE;
  let fromFile: Awaited<ReturnType<typeof startApp>> | undefined;
  try {
    expect(shares(open.app.deps.limits)).toEqual([4000, 4000]);
    expect(shares(openSet.app.deps.limits)).toEqual([1500, 2500]);
    expect(shares(inline.app.deps.limits)).toEqual([1000, 3000]);
    // The Helm chart's auth: a tokens file named by the environment, nothing under auth: in the config.
    writeFileSync(join(dir, 'tokens.yaml'), tokenEntriesYaml([ACME]));
    process.env.DISPATCH_AUTH_TOKENS_FILE = join(dir, 'tokens.yaml');
    fromFile = await startApp(`limits: { ${totals} }\ntools: []`);
    expect(shares(fromFile.app.deps.limits)).toEqual([1000, 3000]);
    expect(await fromFile.dispatch.dispatch({ sessionId: 's', calls: [] }).then(() => 'ok', (e: ServiceError) => e.code)).toBe(16); // UNAUTHENTICATED: auth is on
  } finally {
    if (saved === undefined) delete process.env.DISPATCH_AUTH_TOKENS_FILE;
    else process.env.DISPATCH_AUTH_TOKENS_FILE = saved;
    await Promise.all([open.close(), openSet.close(), inline.close(), fromFile?.close()]);
    rmSync(dir, { recursive: true, force: true });
  }

  // Label pairs: the whole max_label_pairs (at least 1) for a single tenant, half with auth; set, it wins.
  const pairs = (yaml: string, singleTenant: boolean) => telemetrySettings(parseConfig(yaml, 'c.yaml'), { singleTenant }).maxLabelPairsPerTenant;
  expect([pairs('tools: []', true), pairs('tools: []', false)]).toEqual([1000, 500]);
  expect([pairs('telemetry: { max_label_pairs: 0 }', true), pairs('telemetry: { max_label_pairs: 5 }', true)]).toEqual([1, 5]);
  expect(pairs('telemetry: { max_label_pairs: 20, max_label_pairs_per_tenant: 3 }', true)).toBe(3);
  // The config keeps both resolutions, with the same checks and messages.
  expect(parseConfig('tools: []', 'c.yaml').singleTenantLimits?.maxAnswerBytesInFlightPerTenant).toBe(64 * 1024 * 1024);
  expect(resolveLimits({}, { singleTenant: true }).maxArgumentCharsInFlightPerTenant).toBe(32 * 1024 * 1024);
  // max_turns_per_tenant: a fixed 512 with auth, the whole max_turns_in_flight for a single tenant.
  expect([resolveLimits({}).maxTurnsPerTenant, resolveLimits({}, { singleTenant: true }).maxTurnsPerTenant]).toEqual([512, 1024]);
  expect(resolveLimits({ maxTurnsInFlight: 2000 }, { singleTenant: true }).maxTurnsPerTenant).toBe(2000);
  expect(resolveLimits({ maxTurnsInFlight: 2000, maxTurnsPerTenant: 7 }, { singleTenant: true }).maxTurnsPerTenant).toBe(7);
  expect(() => parseConfig('limits: { max_answer_bytes_in_flight: 4000, max_answer_bytes_in_flight_per_tenant: 4001 }', 'c.yaml')).toThrow(
    'c.yaml: limits.max_answer_bytes_in_flight_per_tenant: must be at most the limit on all tenants together (4000), got 4001',
  );
});

test("the app decides on the auth plugin's environment: a tokens file named only there keeps the fractions; a plugin of its own authenticating is warned about", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'single-tenant-env-'));
  writeFileSync(join(dir, 'tokens.yaml'), tokenEntriesYaml([ACME]));
  const viaEnv = await startAuthApp('limits: { max_answer_bytes_in_flight: 4000, max_argument_chars_in_flight: 4000 }\ntools: []', { auth: { env: { DISPATCH_AUTH_TOKENS_FILE: join(dir, 'tokens.yaml') } } });
  try {
    expect([viaEnv.app.deps.limits.maxAnswerBytesInFlightPerTenant, viaEnv.app.deps.limits.maxArgumentCharsInFlightPerTenant, viaEnv.app.deps.limits.maxTurnsPerTenant]).toEqual([1000, 3000, 512]);
  } finally {
    await viaEnv.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const warnings: string[] = [];
  const logger = { ...SILENT_LOGGER, warn: (message: string) => void warnings.push(message) };
  const custom: PluginFactory = async () => ({ name: 'custom-auth', authenticate: () => ({ tenant: 'x', scopes: new Set(['dispatch']) }) as never });
  const app = await buildApp(parseConfig('tools: []', 'c.yaml'), { logger, env: {} }, [...PLUGINS.filter((f) => f !== authPlugin), custom]);
  try {
    expect(warnings).toContain('a plugin authenticates callers, but no authentication is configured: each per-tenant limit left out is the whole limit; set them in limits');
  } finally {
    await app.close();
  }
});
