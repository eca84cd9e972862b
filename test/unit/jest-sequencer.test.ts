import path from 'node:path';

// scripts/jest-sequencer.js: with no durations of jest's own (a clean clone), suites are ordered by
// the committed durations of a full run, the slowest first, and suites it does not know before
// them (jest runs those first too); by file size, small contract suites that run long came last.

const root = path.join(__dirname, '../..');
const Sequencer = require(path.join(root, 'scripts/jest-sequencer.js')) as new () => { sort<T>(tests: T[]): T[] };
const durations = require(path.join(root, 'test/durations.json')) as Record<string, number>;

const suite = (file: string, size: number) => ({
  path: path.join(root, file),
  context: { config: { rootDir: root, cache: false, id: 'sequencer-test' }, hasteFS: { getSize: () => size } },
});

test('the committed durations order the suites, the slowest first, unknown ones before them', () => {
  const known = Object.entries(durations).sort(([, a], [, b]) => b - a);
  const [slowest] = known[0]!;
  const [quick] = known[known.length - 1]!;
  const tests = [suite(quick, 1e6), suite('test/store/redis-store.contract.test.ts', 10), suite(slowest, 10), suite('test/unknown/new.test.ts', 1)];
  const order = new Sequencer().sort(tests).map((t) => path.relative(root, t.path));
  expect(order).toEqual(['test/unknown/new.test.ts', slowest, 'test/store/redis-store.contract.test.ts', quick]);
  expect(durations['test/store/redis-store.contract.test.ts']).toBeGreaterThan(5);
});

test('the config names the sequencer', () => {
  const config = require(path.join(root, 'jest.config.js')) as { testSequencer?: string };
  expect(config.testSequencer).toBe('<rootDir>/scripts/jest-sequencer.js');
});
