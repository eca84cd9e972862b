import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// package.json's "main" names a module the build makes (it named dist/src/index.js, which no
// source became): the app's entry for embedders, buildApp and createPipeline.
test("package.json's main is built from a source file that exports buildApp", () => {
  const root = join(__dirname, '..', '..');
  const main = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { main: string }).main;
  const source = join(root, main.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
  expect(existsSync(source)).toBe(true);
  expect(readFileSync(source, 'utf8')).toMatch(/export \{ buildApp \}/);
});
