'use strict';
// Jest's node environment, measuring each test file's CPU: the worker's own (user + system) and its
// reaped children's (daemons, redis-servers, python), from /proc/self/stat, its wall time, and the
// worker's heap in use (MB) at the file's start, end and after its teardown (jest replaces a worker
// past `workerIdleMemoryLimit` of it). One JSON line per file is appended to $CPU_LOG (default
// jest-cpu.log). Linux only. For finding where the suite's CPU goes, not for CI:
//   CPU_LOG=/tmp/cpu.log npx jest --testEnvironment ./scripts/jest-cpu-env.js [files]
const { TestEnvironment } = require('jest-environment-node');
const { appendFileSync, readFileSync } = require('node:fs');
const { relative } = require('node:path');

/** Clock ticks of [utime, stime, cutime, cstime] (proc(5): fields 14-17; 100 a second). */
function ticks() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [fields[11], fields[12], fields[13], fields[14]].map(Number);
}

class CpuEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = relative(config.projectConfig.rootDir, context.testPath);
  }
  async setup() {
    await super.setup();
    this.started = { ticks: ticks(), at: Date.now(), heap: process.memoryUsage().heapUsed };
  }
  async teardown() {
    const [u, s, cu, cs] = ticks();
    const [u0, s0, cu0, cs0] = this.started.ticks;
    const line = { file: this.file, pid: process.pid, self: (u + s - u0 - s0) / 100, children: (cu + cs - cu0 - cs0) / 100, wall: (Date.now() - this.started.at) / 1000, heapStart: Math.round(this.started.heap / 1048576), heapEnd: Math.round(process.memoryUsage().heapUsed / 1048576) };
    await super.teardown();
    line.heapTornDown = Math.round(process.memoryUsage().heapUsed / 1048576);
    appendFileSync(process.env.CPU_LOG || 'jest-cpu.log', `${JSON.stringify(line)}\n`);
  }
}

module.exports = CpuEnvironment;
