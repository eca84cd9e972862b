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
  // Four on two cores. Most suites wait (timers, child processes, Redis, sockets): a full run with
  // three used 1.66 of the two cores on average (1,386 s of CPU in 837 s; scripts/jest-cpu-env.js
  // measures each file), and a simulation of that run's files put four at ~727 s and more than four
  // at the CPU's own bound (~690 s); the clean-clone CI took 748 s against 924 s. (An earlier
  // trial of four, when the suites' CPU filled the cores, gained nothing and met a load flake.)
  maxWorkers: 4,
  // A worker's heap grows to ~700 MB of garbage V8 never collects over the run; freeing it at exit
  // took past jest's 500 ms grace ("A worker process has failed to exit gracefully"). A worker
  // over this much between test files is replaced (512 MB still left the warning; 256 MB ended it in
  // two full runs, which took no longer). A new worker compiles the modules again (~2.5 s of CPU,
  // every 11-19 files), and still a larger heap costs more: test/guards with test/audit took 135 s
  // of CPU in 10 workers at 256 MB, 171 s in 2 never replaced at 1 GB. A worker slows as it ages,
  // whatever its heap: with its garbage collected before the limit (so the 4 first workers ran all
  // 855 files), the same file cost a median 1.05-1.08x its CPU of a run replacing workers (~11
  // files each) at a worker's 0-19th file, 1.25-1.43x at the 20-49th and 1.5-1.6x past the 50th:
  // 858 s of the workers' CPU against 685, 658 s against 556 s wall. The replacements (~75 a
  // run) cost less than that; keep them. But on a VM where a page fault costs ~10 us (a fresh page
  // of a new worker's heap or a collection's: a Node allocation loop spent as much time in the
  // kernel as in JavaScript; a full CI run 346 s of system time in 1,526 s of CPU, and 830-950 s
  // wall), a new worker costs more: at 512 MB, test/guards with test/middleware took 123 s of CPU
  // against 149-152 s at 256 MB, and test/redis with test/workers 233 s against 251 s, all passing.
  workerIdleMemoryLimit: '512MB',
};
