// The config's `redaction:` section bounds the thread that redacts outputs past 32 Ki characters
// (src/middleware/redaction-worker.ts): thread_timeout_ms, thread_idle_ms and thread_heap_mb,
// before only RedactionWorkerOptions of an embedding. Each is checked at load (a bad value stops
// the start, naming the key) and reaches createRedactionWorker; an app built with a small
// thread_timeout_ms withholds an output that redacts slowly. Needs dist/ (`npm run build`): the
// worker runs the built script.
import { readFileSync } from 'node:fs';
import { parseConfig } from '../../src/config';
import { PLUGINS } from '../../src/app';
import { createGuardsPlugin, guardsPlugin } from '../../src/app/plugins/guards-plugin';
import type { Logger } from '../../src/log';
import { LATE_JOBS_MAX_CHARS, REDACTION_HEAP_MB, REDACTION_TIMEOUT_MS, redactSecrets } from '../../src/middleware';
import * as workerModule from '../../src/middleware/redaction-worker';
import { errorJson } from '../guards/helpers';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

// The real worker, watched: which options each app gives it.
jest.mock('../../src/middleware/redaction-worker', () => {
  const actual = jest.requireActual<typeof import('../../src/middleware/redaction-worker')>('../../src/middleware/redaction-worker');
  return { ...actual, createRedactionWorker: jest.fn(actual.createRedactionWorker) };
});
const createRedactionWorker = workerModule.createRedactionWorker as jest.MockedFunction<typeof workerModule.createRedactionWorker>;

jest.setTimeout(30_000);

const parse = (section: string) => parseConfig(`tools: []\nredaction: ${section}\n`, 'test.yaml');

describe('parsing', () => {
  test('left out, or empty, the worker keeps its defaults', () => {
    expect(parseConfig('tools: []\n', 'test.yaml').redaction).toEqual({});
    expect(parse('{}').redaction).toEqual({});
    expect(parse('').redaction).toEqual({});
  });

  test('the keys become the worker\'s options', () => {
    expect(parse('{ thread_timeout_ms: 5000, thread_idle_ms: 10000, thread_heap_mb: 128 }').redaction).toEqual({ timeoutMs: 5000, idleMs: 10000, heapMb: 128 });
    expect(parse('{ thread_heap_mb: 256 }').redaction).toEqual({ heapMb: 256 });
    expect(parse('{ late_jobs_max_chars: 1048576 }').redaction).toEqual({ lateMaxChars: 1_048_576 });
  });

  test('the bounds themselves are accepted', () => {
    expect(parse('{ thread_timeout_ms: 100, thread_idle_ms: 1000, thread_heap_mb: 64 }').redaction).toEqual({ timeoutMs: 100, idleMs: 1000, heapMb: 64 });
    expect(parse('{ thread_timeout_ms: 600000, thread_idle_ms: 2147483647, thread_heap_mb: 4096 }').redaction).toEqual({ timeoutMs: 600_000, idleMs: 2_147_483_647, heapMb: 4096 });
    expect(parse('{ late_jobs_max_chars: 0 }').redaction).toEqual({ lateMaxChars: 0 });
    expect(parse('{ late_jobs_max_chars: 268435456 }').redaction).toEqual({ lateMaxChars: 268_435_456 });
  });

  test.each([
    ['{ thread_timeout_ms: 99 }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got 99'],
    ['{ thread_timeout_ms: 600001 }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got 600001'],
    ['{ thread_timeout_ms: 0 }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got 0'],
    ['{ thread_timeout_ms: 1500.5 }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got 1500.5'],
    ['{ thread_timeout_ms: "5000" }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got "5000"'],
    ['{ thread_timeout_ms: null }', 'redaction.thread_timeout_ms: must be an integer from 100 to 600000, got null'],
    ['{ thread_idle_ms: 999 }', 'redaction.thread_idle_ms: must be an integer from 1000 to 2147483647, got 999'],
    ['{ thread_idle_ms: 2147483648 }', 'redaction.thread_idle_ms: must be an integer from 1000 to 2147483647, got 2147483648'],
    ['{ thread_heap_mb: 63 }', 'redaction.thread_heap_mb: must be an integer from 64 to 4096, got 63'],
    ['{ thread_heap_mb: 4097 }', 'redaction.thread_heap_mb: must be an integer from 64 to 4096, got 4097'],
    ['{ thread_heap_mb: -512 }', 'redaction.thread_heap_mb: must be an integer from 64 to 4096, got -512'],
    ['{ thread_heap_mb: .inf }', 'redaction.thread_heap_mb: must be an integer from 64 to 4096, got Infinity'],
    ['{ thread_heap_mb: 512MB }', 'redaction.thread_heap_mb: must be an integer from 64 to 4096, got "512MB"'],
    ['{ late_jobs_max_chars: -1 }', 'redaction.late_jobs_max_chars: must be an integer from 0 to 268435456, got -1'],
    ['{ late_jobs_max_chars: 268435457 }', 'redaction.late_jobs_max_chars: must be an integer from 0 to 268435456, got 268435457'],
  ])('%s is refused, naming the key', (section, message) => {
    expect(() => parse(section)).toThrow(`test.yaml: ${message}`);
  });

  test.each([
    ['{ timeout_ms: 5000 }', 'redaction.timeout_ms: unknown key "timeout_ms" (did you mean thread_timeout_ms?)'],
    ['{ heap_mb: 128 }', 'redaction.heap_mb: unknown key "heap_mb" (did you mean thread_heap_mb?)'],
    ['{ thread_timout_ms: 5000 }', 'redaction.thread_timout_ms: unknown key "thread_timout_ms" (did you mean thread_timeout_ms?)'],
    ['{ threadHeapMb: 128 }', 'redaction.threadHeapMb: unknown key "threadHeapMb" (did you mean thread_heap_mb?)'],
    ['{ patterns: [] }', 'redaction.patterns: unknown key "patterns" (expected one of thread_timeout_ms, thread_idle_ms, thread_heap_mb, late_jobs_max_chars)'],
    ['500', 'redaction: must be a mapping'],
    ['[thread_timeout_ms]', 'redaction: must be a mapping'],
  ])('%s is refused, naming the key', (section, message) => {
    expect(() => parse(section)).toThrow(`test.yaml: ${message}`);
  });

  test('a misspelt section is offered redaction', () => {
    expect(() => parseConfig('redacton: { thread_heap_mb: 128 }\n', 'test.yaml')).toThrow('test.yaml: redacton: unknown key "redacton" (did you mean redaction?)');
  });

  test("README's reference config states the worker's defaults", () => {
    const readme = readFileSync('README.md', 'utf8');
    const config = parseConfig(/```yaml\n([\s\S]*?)```/.exec(readme)![1]!, 'README.yaml');
    expect(config.redaction).toEqual({ timeoutMs: REDACTION_TIMEOUT_MS, idleMs: 30_000, heapMb: REDACTION_HEAP_MB, lateMaxChars: LATE_JOBS_MAX_CHARS });
  });
});

describe('the app', () => {
  afterEach(() => createRedactionWorker.mockClear());

  const warnings = () => {
    const seen: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (message) => void seen.push(message), error() {} };
    return { logger, seen };
  };

  test("gives the worker the config's bounds; an embedding's own options win key by key", async () => {
    const yaml = 'tools: []\nredaction: { thread_timeout_ms: 7000, thread_idle_ms: 2000, thread_heap_mb: 96, late_jobs_max_chars: 4096 }\n';
    const d = await startApp(yaml);
    await d.close();
    expect(createRedactionWorker).toHaveBeenCalledTimes(1);
    expect(createRedactionWorker.mock.calls[0]![1]).toEqual({ timeoutMs: 7000, idleMs: 2000, heapMb: 96, lateMaxChars: 4096 });
    createRedactionWorker.mockClear();
    const embedded = await startApp(yaml, {}, PLUGINS.map((f) => (f === guardsPlugin ? createGuardsPlugin({ redactionWorker: { heapMb: 16 } }) : f)));
    await embedded.close();
    expect(createRedactionWorker.mock.calls[0]![1]).toEqual({ timeoutMs: 7000, idleMs: 2000, heapMb: 16, lateMaxChars: 4096 });
  });

  test('without the section the worker gets no options: its defaults', async () => {
    const d = await startApp('tools: []\n');
    await d.close();
    expect(createRedactionWorker.mock.calls[0]![1]).toEqual({});
  });

  test('thread_heap_mb under --max-old-space-size (NODE_OPTIONS, as the Helm chart sets it) is not warned of: the bound holds there too (test/server/thread-heap.test.ts)', async () => {
    const saved = process.env.NODE_OPTIONS;
    try {
      process.env.NODE_OPTIONS = '--max-old-space-size=332';
      const flagged = warnings();
      await (await startApp('tools: []\nredaction: { thread_heap_mb: 128 }\n', { logger: flagged.logger })).close();
      expect(flagged.seen.filter((m) => m.includes('thread_heap_mb'))).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
  });
});

describe('thread_timeout_ms applied end to end', () => {
  /** ~2.4 Mi characters of the slowest hostile text: ~2.7 s of redaction alone on a core. */
  const SLOW = 'pwd="a" '.repeat(300_000);
  /** Past the 32 Ki characters redacted inline, quick to redact: goes to the thread, and back well within 500 ms. */
  const QUICK = 'password: hunter2\n'.repeat(3_000);
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startApp>>;

  beforeAll(async () => {
    tools = await startToolServer({
      '/slow': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(SLOW),
      '/quick': (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(QUICK),
    });
    d = await startApp(`
tools:
  - { name: slow, effect: read_only, skip_memoize: true, input_schema: '{"type":"object"}', http: { url: "${tools.url}/slow" } }
  - { name: quick, effect: read_only, skip_memoize: true, max_result_chars: 100000, input_schema: '{"type":"object"}', http: { url: "${tools.url}/quick" } }
redaction: { thread_timeout_ms: 500 }
`);
  });

  afterAll(async () => {
    await d?.close();
    await tools?.close();
  });

  test('an output redacting past 500 ms is withheld: UNEXPECTED, naming the bound, not retried', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'slow', arguments: '{}' }] });
    const result = res.results[0]!;
    expect(result.isError).toBe(true);
    expect(result.output).not.toContain('pwd="a"');
    expect(errorJson(result.output)).toMatchObject({
      kind: 'UNEXPECTED',
      message: `the tool answered ${SLOW.length} characters, which were not redacted (redacting it took longer than 500 ms); the answer is withheld`,
      recoverable: false,
      attempts: 1,
    });
    expect(tools.count('/slow')).toBe(1);
  });

  test('an output the thread redacts within the bound still passes, redacted', async () => {
    const res = await d.dispatch.dispatch({ sessionId: 's2', calls: [{ id: 'c2', name: 'quick', arguments: '{}' }] });
    const result = res.results[0]!;
    expect(result.isError).toBe(false);
    expect(result.output).toBe(redactSecrets(QUICK));
    expect(result.output).not.toContain('hunter2');
  });
});
