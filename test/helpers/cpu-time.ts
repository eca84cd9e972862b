import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

// CPU time, for bounds on work that must hold on a busy machine: wall time on two shared cores
// grows with whatever else runs (a scan of 1 MiB took 4-5x its idle time with five busy loops
// beside the suite), while the CPU a step spends does not. A superlinear step shows in both.

/** CPU milliseconds (user and system, every thread of this process) spent since `since`. */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1_000;
}

/**
 * This thread's own CPU time in ms (the kernel's run time of the task, ns in
 * `/proc/self/task/<tid>/schedstat`), on Linux in a process's main thread, whose task id is the
 * pid; undefined elsewhere.
 */
function threadCpuMs(): number | undefined {
  if (!isMainThread) return undefined;
  try {
    const ns = Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU milliseconds spent running `work` to its end (synchronous work only): the calling thread's
 * alone where the kernel tells it (see threadCpuMs), else the whole process's. The process's would
 * also count its other threads running meanwhile (V8's concurrent collection of a heap a jest
 * worker filled with earlier files' garbage, a thread a test left working): a 47 ms loop measured
 * 94 ms so beside one busy thread of the process. The thread's own time still has its collector's
 * pauses, and the host's time on its core (see slowerThan): a 1 MiB redaction that takes 11-38 ms
 * alone measured 540-620 ms of it in a clean-clone CI run, so a bound on it needs a baseline
 * measured beside it.
 */
export function cpuMsOf(work: () => void): number {
  const threadStarted = threadCpuMs();
  const started = process.cpuUsage();
  work();
  const threadEnded = threadCpuMs();
  return threadStarted !== undefined && threadEnded !== undefined ? threadEnded - threadStarted : cpuMsSince(started);
}

/** How far past its limit a linear step may take against its input's first quarter: 4x and slack; a quadratic one takes 16x. */
const LINEAR_RATIO = 8;

/**
 * The CPU ms of `run` (the fastest of up to three runs) when it is too slow: at `limitMs` or more,
 * and also at `ratio` times or more `baseline` (the fastest of three, run just after); undefined
 * when it is not. The baseline is the same kind of work, which the fault a bound guards against
 * makes `ratio` times cheaper or more (a quarter of the input for a quadratic step, a small input
 * for a bounded one). The limit alone does not hold: a step's own CPU time grew 15-50x for
 * seconds at a time in clean-clone CI runs on these VMs (PVM under Firecracker; /proc/stat reports
 * no steal time, so time the host takes a core from the VM is charged to whatever ran on it, the
 * likely cause), and the baseline's grows with it.
 */
export function slowerThan(run: () => unknown, baseline: () => unknown, ratio: number, limitMs: number): number | undefined {
  let ms = cpuMsOf(run);
  for (let again = 0; again < 2 && ms >= limitMs; again++) ms = Math.min(ms, cpuMsOf(run));
  if (ms < limitMs) return undefined;
  const baselineMs = Math.min(...Array.from({ length: 3 }, () => cpuMsOf(baseline)));
  return ms >= ratio * baselineMs ? ms : undefined;
}

/**
 * slowerThan for asynchronous steps (a call through the app, a child process's answer read), each
 * run to its end in turn: measured by the whole process's CPU (cpuMsSince), as they span the event
 * loop's turns and other threads.
 */
export async function slowerThanAsync(run: () => Promise<unknown>, baseline: () => Promise<unknown>, ratio: number, limitMs: number): Promise<number | undefined> {
  const timed = async (step: () => Promise<unknown>): Promise<number> => {
    const since = process.cpuUsage();
    await step();
    return cpuMsSince(since);
  };
  let ms = await timed(run);
  for (let again = 0; again < 2 && ms >= limitMs; again++) ms = Math.min(ms, await timed(run));
  if (ms < limitMs) return undefined;
  let baselineMs = Infinity;
  for (let i = 0; i < 3; i++) baselineMs = Math.min(baselineMs, await timed(baseline));
  return ms >= ratio * baselineMs ? ms : undefined;
}

/**
 * slowerThan for `run(text)` against the text's first quarter, at LINEAR_RATIO: a quarter of a
 * hostile text made of one unit repeated is the same input, smaller. test/parse/adversarial holds
 * its parses so.
 */
export function slowerThanLinear(text: string, run: (text: string) => unknown, limitMs: number): number | undefined {
  const quarter = text.slice(0, Math.floor(text.length / 4));
  return slowerThan(() => run(text), () => run(quarter), LINEAR_RATIO, limitMs);
}
