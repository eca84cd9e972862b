// Our worker threads (the redaction thread, the schema compiler: src/server/job-thread.ts) keep
// their own heap bounds in a process run with --max-old-space-size, as the Helm chart runs
// dispatchd (NODE_OPTIONS from heapPercent). V8 applies that flag to every heap it makes, over a
// thread's resourceLimits (nodejs/node#43991): before, a redaction thread bounded at 16 MB got the
// main heap's 256 MB and redacted what should have run it out of memory. startWithOwnHeap lifts
// the flag while a thread starts. Each case is a real node process given the flag; needs dist/.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { redactSecrets } from '../../src/middleware';
import { oldSpaceFlag, threadHeapDefault } from '../../src/server/thread-heap';

jest.setTimeout(60_000);

const DIST = resolve(__dirname, '../../dist/src');

/**
 * Run in the child: a redaction thread bounded at 16 MB is given ~10 MB of JSON secrets (it needs
 * more than 16 MB to redact them: the worker's own out-of-memory test), then a plain thread with
 * no resourceLimits reports its heap limit (the flag's again, once ours is online). Prints JSON.
 */
const CHILD = `
const v8 = require('node:v8');
const { Worker } = require('node:worker_threads');
const { createRedactionWorker } = require(${JSON.stringify(`${DIST}/middleware/redaction-worker.js`)});
const mb = (bytes) => Math.round(bytes / 1048576);
(async () => {
  const worker = createRedactionWorker({}, { heapMb: 16 });
  const text = JSON.stringify(Array.from({ length: 200000 }, (_, i) => ({ password: 'hunter2hunter2' + i, note: 'n' + i })));
  const call = { tenant: 't', deadline: Date.now() + 50000, onAbort: () => () => undefined };
  let bounded;
  try {
    await worker.redact([text], call, false);
    bounded = 'redacted';
  } catch (error) {
    bounded = error.reason + ': ' + error.message;
  }
  const small = await worker.redact(['password: hunter2'], call, false);
  await worker.close();
  const plain = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)", { eval: true });
  const plainLimit = await new Promise((done) => plain.once('message', done));
  await plain.terminate();
  console.log(JSON.stringify({ bounded, small, mainLimitMb: mb(v8.getHeapStatistics().heap_size_limit), plainThreadLimitMb: mb(plainLimit) }));
})();
`;

interface ChildReport {
  readonly bounded: string;
  readonly small: string[];
  readonly mainLimitMb: number;
  readonly plainThreadLimitMb: number;
}

function runChild(args: readonly string[], nodeOptions: string): Promise<ChildReport> {
  return new Promise((done, fail) => {
    execFile(process.execPath, [...args, '-e', CHILD], { env: { ...process.env, NODE_OPTIONS: nodeOptions }, timeout: 50_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`child failed: ${error.message}\n${stderr}`));
      else done(JSON.parse(stdout.trim().split('\n').pop()!) as ChildReport);
    });
  });
}

describe.each([
  ['on the command line', ['--max-old-space-size=256'], ''],
  ['in NODE_OPTIONS, as the Helm chart sets it', [], '--max-old-space-size=256'],
  ['written with underscores', ['--max_old_space_size=256'], ''],
])('--max-old-space-size %s', (_label, args, nodeOptions) => {
  test("the redaction thread keeps its 16 MB: the output it cannot redact within them fails, the next is redacted; the main heap and other threads keep the flag's bound", async () => {
    const report = await runChild(args, nodeOptions);
    expect(report.bounded).toMatch(/^crashed: .*memory/);
    expect(report.small).toEqual([redactSecrets('password: hunter2')]);
    // 256 MB of old space and V8's young generation: far below this machine's default (GBs).
    expect(report.mainLimitMb).toBeGreaterThanOrEqual(256);
    expect(report.mainLimitMb).toBeLessThan(400);
    // A thread started afterwards without resourceLimits gets the flag's bound again: it was put back.
    expect(report.plainThreadLimitMb).toBe(report.mainLimitMb);
  });
});

test('without the flag, the thread keeps its bound as before', async () => {
  const report = await runChild([], '');
  expect(report.bounded).toMatch(/^crashed: .*memory/);
  expect(report.mainLimitMb).toBeGreaterThan(400);
});

test('the flag is read from the command line over NODE_OPTIONS, either spelling, the last one given', () => {
  expect(oldSpaceFlag([], '')).toBeUndefined();
  expect(oldSpaceFlag(['--max-old-space-size=332'], '')).toBe('332');
  expect(oldSpaceFlag([], '--enable-source-maps --max-old-space-size=332')).toBe('332');
  expect(oldSpaceFlag([], '--max_old_space_size=332')).toBe('332');
  expect(oldSpaceFlag(['--max-old-space-size=128'], '--max-old-space-size=332')).toBe('128');
  expect(oldSpaceFlag(['--max-old-space-size=64', '--max-old-space-size=96'], '')).toBe('96');
  expect(oldSpaceFlag([], '--max-old-space-size=100 --max-old-space-size=200')).toBe('200');
  expect(oldSpaceFlag(['--max-semi-space-size=16'], '--max-old-space-size-percentage=50')).toBeUndefined();
});

test("a thread's default bound is the main heap's when the flag sets a smaller one (as each thread had before); an explicit bound is the caller's", () => {
  expect(threadHeapDefault(512, undefined)).toBe(512);
  expect(threadHeapDefault(512, '332')).toBe(332);
  expect(threadHeapDefault(160, '332')).toBe(160);
  expect(threadHeapDefault(512, '')).toBe(512);
  expect(threadHeapDefault(512, '0')).toBe(512);
});
