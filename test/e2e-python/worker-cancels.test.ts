// worker.py and the assignments dispatch cancels: no completion for one, and nothing kept of it
// afterwards (the set of cancelled ids used to grow with every cancel for as long as a stream lived).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startApp } from '../helpers/servers';
import { until } from '../helpers/until';
import { describeWithPython, EXAMPLES, finished, PYTHON, spawnPython, type RunningPython } from './python';

// worker.py with py_word_count slowed down for the text "slow" (1.2 s: time for a cancel to reach
// it while it runs, and for the ninth to be cancelled before a thread comes free; a cancel too late
// fails the test), and each stream's Assignments recorded (each assignment printed as it arrives)
// so that what they still hold can be printed when the worker stops.
const SLOWED_WORKER = `
import sys, time
import worker

held = []
class Recorded(worker.Assignments):
    def __init__(self):
        super().__init__()
        held.append(self)
    def start(self, assignment_id):
        super().start(assignment_id)
        worker.say(f"assigned {assignment_id}")
worker.Assignments = Recorded

count = worker.TOOLS["py_word_count"]
def slowed(arguments):
    if arguments["text"] == "slow":
        worker.say("tool started")
        time.sleep(1.2)
        worker.say("tool ended")
    return count(arguments)
worker.TOOLS["py_word_count"] = slowed

sys.argv = ["worker.py", *sys.argv[1:]]
code = worker.main()
print("held (open, cancelled):", *[a.sizes() for a in held], flush=True)
sys.exit(code)
`;

describeWithPython('worker.py and cancelled assignments', () => {
  const stubs = mkdtempSync(path.join(tmpdir(), 'py-cancel-stubs-'));
  afterAll(() => rmSync(stubs, { recursive: true, force: true }));

  test('the ids it holds stay within the assignments still open, whatever the cancels', () => {
    const code = `
import worker
a = worker.Assignments()
for i in range(100_000):
    a.start(str(i))
    a.finish(str(i))
    a.cancel(str(i))  # a cancel that crossed the completion
print(a.sizes())
a.start("x")
print(a.cancel("x"), a.cancelled("x"), a.sizes(), a.finish("x"), a.sizes(), a.cancel("never started"), a.sizes())
`;
    const run = spawnSync(PYTHON, ['-c', code], { cwd: EXAMPLES, encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('(0, 0)\nTrue True (1, 1) True (0, 0) False (0, 0)\n');
  }, 60_000);

  describe('against a running dispatch', () => {
    let t: Awaited<ReturnType<typeof startApp>>;
    beforeEach(async () => {
      t = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
    });
    afterEach(() => t.close());

    /** The slowed worker, once dispatch lists its tool. */
    async function slowedWorker(): Promise<RunningPython> {
      const worker = spawnPython(['-c', SLOWED_WORKER, '--address', t.address, '--id', 'py-cancel'], { DISPATCH_PY_STUBS: path.join(stubs, 'stubs') });
      await until(async () => {
        if (worker.child.exitCode !== null) throw new Error(`the Python worker exited: ${worker.out()}`);
        return (await t.registry.listTools({})).tools.some((x) => x.name === 'py_word_count') || undefined;
      }, 'the Python worker to register', 20_000);
      return worker;
    }
    const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;
    const slowCall = (session: string, signal: AbortSignal) =>
      t.dispatch.dispatch({ sessionId: session, calls: [{ id: 'slow', name: 'py_word_count', arguments: '{"text": "slow"}' }] }, { signal }).catch((error: Error) => error);
    /** Stops the worker; what it printed, after checking it stopped cleanly holding nothing. */
    async function stopHoldingNothing(worker: RunningPython): Promise<string> {
      worker.child.kill('SIGTERM');
      const { code, out } = await finished(worker);
      expect(code).toBe(0);
      expect(out).toContain('held (open, cancelled): (0, 0)\n');
      return out;
    }

    test('an assignment cancelled while it runs sends no completion, and the worker holds nothing of it', async () => {
      const worker = await slowedWorker();
      try {
        const abort = new AbortController();
        const slow = slowCall('c', abort.signal);
        await until(() => worker.out().includes('tool started') || undefined, 'the slow tool to start');
        abort.abort();
        expect(await slow).toBeInstanceOf(Error);
        await until(() => /^cancelled [\w-]+$/m.test(worker.out()) || undefined, 'the cancel to reach the worker');
        await until(() => worker.out().includes('tool ended') || undefined, 'the slow tool to end');
        const { results } = await t.dispatch.dispatch({ sessionId: 'c', calls: [{ id: 'after', name: 'py_word_count', arguments: '{"text": "a b"}' }] });
        expect(results[0]).toMatchObject({ isError: false, output: '{"words": 2, "longest": "a"}' });
        const out = await stopHoldingNothing(worker);
        expect(out).not.toContain('call=slow');
        expect(out).toContain('completed py_word_count call=after attempt=1 error=False');
      } finally {
        worker.child.kill('SIGKILL');
      }
    }, 60_000);

    test('an assignment cancelled while it waits for one of the 8 threads is not run', async () => {
      const worker = await slowedWorker();
      try {
        const abort = new AbortController();
        const calls = Array.from({ length: 9 }, (_, i) => slowCall(`q${i}`, abort.signal));
        await until(() => (count(worker.out(), /^assigned /gm) === 9 && count(worker.out(), /^tool started$/gm) === 8) || undefined, '9 assignments, 8 of them running');
        abort.abort();
        for (const call of calls) expect(await call).toBeInstanceOf(Error);
        await until(() => count(worker.out(), /^tool ended$/gm) === 8 || undefined, 'the 8 running to end');
        await until(() => count(worker.out(), /^cancelled /gm) === 9 || undefined, 'the 9 cancels');
        const out = await stopHoldingNothing(worker);
        expect(count(out, /^tool started$/gm)).toBe(8);
        expect(out).not.toContain('call=slow');
      } finally {
        worker.child.kill('SIGKILL');
      }
    }, 60_000);
  });
});
