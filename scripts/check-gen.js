#!/usr/bin/env node
'use strict';
// Fails when gen/ differs from what `buf generate` makes of proto/ now: regenerates into a temporary
// directory and compares file by file.
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');
const { tmpdir } = require('node:os');

const root = join(__dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'dispatch-gen-'));
const template = JSON.stringify({
  version: 'v2',
  inputs: [{ directory: 'proto' }],
  plugins: [{ local: 'protoc-gen-es', out, opt: ['target=ts', 'import_extension=none', 'json_types=true'] }],
});

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

try {
  const buf = join(root, 'node_modules', '.bin', 'buf');
  execFileSync(buf, ['lint'], { cwd: root, stdio: 'inherit' });
  execFileSync(buf, ['generate', '--template', template], { cwd: root, stdio: 'inherit', env: { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH}` } });
  const expected = new Map(files(out).map((f) => [relative(out, f), readFileSync(f, 'utf8')]));
  const actual = new Map(files(join(root, 'gen')).map((f) => [relative(join(root, 'gen'), f), readFileSync(f, 'utf8')]));
  const stale = [...new Set([...expected.keys(), ...actual.keys()])].filter((f) => expected.get(f) !== actual.get(f));
  if (stale.length > 0) {
    console.error(`gen/ is stale; run \`npm run generate\`. Differs: ${stale.join(', ')}`);
    process.exit(1);
  }
  console.log(`gen/ is up to date (${expected.size} files)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
