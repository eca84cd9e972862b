#!/usr/bin/env node
'use strict';
// Writes test/durations.json (seconds per suite, rounded to 0.1) from a full run's jest --json
// report, for scripts/jest-sequencer.js: `node scripts/test-durations.js REPORT.json`.
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const durations = {};
for (const suite of [...report.testResults].sort((a, b) => (a.name < b.name ? -1 : 1))) {
  durations[relative(root, suite.name)] = Math.round((suite.endTime - suite.startTime) / 100) / 10;
}
writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify(durations, null, 1)}\n`);
console.log(`test/durations.json: ${Object.keys(durations).length} suites`);
