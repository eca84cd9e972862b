import { closeApp } from '../../src/app/close-app';
import { buildApp, type Plugin } from '../../src/app';
import { parseConfig } from '../../src/config';
import { createLogger, SILENT_LOGGER } from '../../src/log';
import { NOOP_OBSERVER } from '../../src/pipeline';
import { createScratchDirs } from '../../src/session';
import { createMemoryStore } from '../../src/store';

// The app's closing steps run together, within a budget: the plugins that may still end calls
// first (waited for at most `firstMs`), then the observer's plugin, the store and the scratch
// directories; a step still running at the budget is logged and left behind.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder() {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(line) > 0) };
}

function plugin(name: string, ms: number, log: string[], observer = false): Plugin {
  return {
    name,
    ...(observer ? { observer: NOOP_OBSERVER } : {}),
    close: async () => {
      log.push(`${name} start`);
      await sleep(ms);
      log.push(`${name} end`);
    },
  };
}

const deps = () => ({ store: createMemoryStore(), scratch: createScratchDirs() });

test('plugins close together, the observer’s once the others have closed', async () => {
  const log: string[] = [];
  const { logger, lines } = recorder();
  const started = Date.now();
  await closeApp([plugin('store', 100, log), plugin('observability', 100, log, true), plugin('guards', 150, log), plugin('executors', 150, log)], deps(), logger, { budgetMs: 2_000, firstMs: 1_000 });
  const took = Date.now() - started;
  expect(log.slice(0, 3).sort()).toEqual(['executors start', 'guards start', 'store start']);
  expect(log.indexOf('observability start')).toBeGreaterThan(log.indexOf('guards end'));
  expect(log.indexOf('observability start')).toBeGreaterThan(log.indexOf('executors end'));
  // 150 + 100, not 100 + 100 + 150 + 150.
  expect(took).toBeLessThan(450);
  expect(lines.join('')).not.toContain('did not finish');
});

test('a plugin that does not close in time is left behind, and the whole close ends at its budget', async () => {
  const log: string[] = [];
  const { logger, lines } = recorder();
  const started = Date.now();
  const hung: Plugin = { name: 'executors', close: () => (log.push('executors start'), new Promise<void>(() => undefined)) };
  await closeApp([hung, plugin('observability', 50, log, true), { name: 'broken', close: async () => Promise.reject(new Error('boom')) }], deps(), logger, { budgetMs: 600, firstMs: 200 });
  const took = Date.now() - started;
  // The observer's plugin started once the first round's bound had passed, and ended.
  expect(log).toEqual(['executors start', 'observability start', 'observability end']);
  expect(took).toBeGreaterThanOrEqual(590);
  expect(took).toBeLessThan(900);
  const text = lines.join('');
  expect(text).toContain('"message":"closing steps did not finish in time; stopping without them"');
  expect(text).toContain('"steps":["plugin executors"]');
  expect(text).toMatch(/"message":"closing step failed","step":"plugin broken","error":"boom"/);
});

test('an app closed twice at once closes each plugin once, both closes resolving when it is done', async () => {
  const log: string[] = [];
  const app = await buildApp(parseConfig('tools: []\n', 'test.yaml'), { logger: SILENT_LOGGER }, [async () => plugin('counted', 100, log)]);
  await app.listen('127.0.0.1:0');
  await Promise.all([app.close(100), app.close(100), app.close(0)]);
  expect(log).toEqual(['counted start', 'counted end']);
});
