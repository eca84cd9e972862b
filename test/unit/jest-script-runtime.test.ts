import { Script } from 'node:vm';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// scripts/jest-script-runtime.js runs every module of the suite, this one included, through one
// vm.Script per worker wrapped on a line of its own: stack traces keep the module's own lines and
// columns, and a module runs as CommonJS with the globals jest injects.

test("a stack trace names this file's own line and column", () => {
  const here = new Error('here');
  const frame = here.stack!.split('\n')[1]!;
  expect(frame).toContain(`jest-script-runtime.test.ts:10:16`);
});

test('modules run as CommonJS functions with jest injected, under the runtime the config names', () => {
  expect(typeof module.exports).toBe('object');
  expect(typeof require).toBe('function');
  expect(typeof jest.fn).toBe('function');
  const config = require(path.join(__dirname, '../../jest.config.js')) as { runtime?: string };
  expect(config.runtime).toBe('<rootDir>/scripts/jest-script-runtime.js');
  // The runtime's wrapper compiles as a script of its own (a syntax check of what it sends V8).
  const source = readFileSync(path.join(__dirname, '../../scripts/jest-script-runtime.js'), 'utf8');
  expect(() => new Script(source)).not.toThrow();
});
