#!/usr/bin/env node
'use strict';
// `npm run bench` (builds dist/ first), or `node bench/run.js [PART...]` for some parts only.
// A part is a bench/<part>-bench.js module exporting `run(options)`: core (issue 2), waves
// (issue 5), and whichever others are present (parse, guards, telemetry, redis, ...). A part
// prints its own tables and may return `{ verdicts: [{name, ratio, target, ok}] }`, summarised at
// the end; any other result is printed by the module's exported `print(result)` if it has one,
// else as JSON, and a boolean `pass` in it is summarised too.
// `--profile` records a CPU profile of each dispatch server child over its measured time and
// prints where that time went (the .cpuprofile files stay in a temporary directory, printed).
const { existsSync, mkdirSync, mkdtempSync, readdirSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

/** Parts run first, in this order; any other bench/*-bench.js follows, by name. */
const ORDER = ['core', 'waves', 'parse', 'guards', 'telemetry', 'redis'];
const present = readdirSync(__dirname).filter((f) => f.endsWith('-bench.js')).map((f) => f.slice(0, -'-bench.js'.length));
const PARTS = [...ORDER, ...present.filter((p) => !ORDER.includes(p)).sort()];

function skipReason(part) {
  if (!present.includes(part)) return `bench/${part}-bench.js is not present`;
  if (part === 'redis' && spawnSync('redis-server', ['--version']).error) return 'no redis-server binary on PATH';
  return undefined;
}

async function main() {
  const profile = process.argv.includes('--profile');
  const args = process.argv.slice(2).filter((a) => a !== '--profile');
  const unknown = args.filter((a) => !PARTS.includes(a));
  if (unknown.length > 0) {
    console.error(`unknown part(s) ${unknown.join(', ')}; parts: ${PARTS.join(', ')}`);
    process.exit(2);
  }
  if (!existsSync(path.join(__dirname, '..', 'dist', 'src', 'app', 'index.js'))) {
    console.error('dist/ is missing: run `npm run bench` (it builds first) or `npx tsc -p .`');
    process.exit(2);
  }
  const parts = args.length > 0 ? args : PARTS;
  const { DEFAULT_DURATION_MS, DEFAULT_WARMUP_MS } = require('./lib');
  console.log(`dispatch benchmarks on loopback: node ${process.version}, ${require('node:os').cpus().length} CPUs, ${DEFAULT_WARMUP_MS} ms warmup + ${DEFAULT_DURATION_MS} ms per measurement`);
  const summary = [];
  const options = {};
  if (profile) options.profileDir = mkdtempSync(path.join(os.tmpdir(), 'dispatch-bench-prof-'));
  let failed = false;
  for (const part of parts) {
    const skip = skipReason(part);
    console.log(`\n=== ${part} ${skip ? `(skipped: ${skip})` : ''}`);
    if (skip) continue;
    try {
      const profileDir = options.profileDir && path.join(options.profileDir, part);
      if (profileDir) mkdirSync(profileDir);
      const mod = require(`./${part}-bench.js`);
      const result = await mod.run({ profileDir });
      if (result && !Array.isArray(result.verdicts)) {
        if (typeof mod.print === 'function') mod.print(result);
        else console.log(JSON.stringify(result, null, 2));
        if (typeof result.pass === 'boolean') summary.push({ part, name: 'the part\'s own targets', ok: result.pass });
      }
      if (options.profileDir && existsSync(path.join(options.profileDir, part))) require('./lib/profile-summary').summariseProfiles(path.join(options.profileDir, part));
      for (const v of result?.verdicts ?? []) summary.push({ part, ...v });
    } catch (error) {
      failed = true;
      console.error(`${part} failed: ${error && error.stack ? error.stack : error}`);
    }
  }
  if (summary.length > 0) {
    console.log('\n=== summary');
    for (const v of summary) console.log(`${v.ok ? 'MET ' : 'MISS'} [${v.part}] ${v.name}${typeof v.ratio === 'number' ? `: ${v.ratio.toFixed(2)}x (target <= ${v.target}x)` : ''}${typeof v.roundMedian === 'number' ? `, by round ${v.roundMedian.toFixed(2)}x (${v.roundLow.toFixed(2)}-${v.roundHigh.toFixed(2)})` : ''}`);
  }
  process.exit(failed ? 1 : 0);
}

main();
