/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  testTimeout: 30000,
  // Each module compiled once per worker and run in each test file's context (see the file): ~17%
  // less CPU and ~9% less time for test/guards.
  runtime: '<rootDir>/scripts/jest-script-runtime.js',
  // The slowest suites first, from a full run's durations where jest cached none (a clean clone).
  testSequencer: '<rootDir>/scripts/jest-sequencer.js',
  // Three on two cores: most suites wait (timers, child processes, Redis, sockets), and with two
  // workers the CPU was ~70% used; on a slower machine the run took 16 min (950 s of jest). Four
  // took test/guards and test/redis from 159 s to 134-138 s, but the whole clean-clone run took
  // 613 s of jest against 600 s with three, and met a load flake: not kept.
  maxWorkers: 3,
  // A worker's heap grows to ~700 MB of garbage V8 never collects over the run; freeing it at exit
  // took past jest's 500 ms grace ("A worker process has failed to exit gracefully"). A worker
  // over this much between test files is replaced (512 MB still left the warning; 256 MB ended it in
  // two full runs, which took no longer).
  workerIdleMemoryLimit: '256MB',
};
