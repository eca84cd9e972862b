'use strict';
// Jest's sequencer, with the suites' durations of a full run committed (test/durations.json) for
// when jest has none of its own. Jest runs the slowest suites first from the durations it cached
// in an earlier run of the same checkout, and by file size without them: in a clean clone (CI)
// the store contract suites, small files that run a whole contract, came last and kept one worker
// busy for ~14 s after the others had finished. Refresh the file from a full run's report:
// `npx jest --json --outputFile=r.json; node scripts/test-durations.js r.json`.
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const durations = require('../test/durations.json');

class DurationSequencer extends Sequencer {
  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    const seconds = durations[relative(test.context.config.rootDir, test.path)];
    return seconds === undefined ? undefined : seconds * 1000;
  }
}

module.exports = DurationSequencer;
