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
 * pauses, and on a loaded VM it still grows: a 1 MiB redaction that takes 11-38 ms alone measured
 * 540-620 ms of it in a clean-clone CI run (cause not seen), so a bound on it may need a baseline
 * measured beside it (as redaction-azure-sas-signature and test/parse/adversarial have).
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
 * The CPU ms of `run(text)` (the fastest of up to three runs) when it is not linear: at `limitMs` or
 * more, and also at LINEAR_RATIO times or more the same run on the text's first quarter, measured
 * just after (the fastest of three); undefined when it is. A quarter of a hostile text made of one
 * unit repeated is the same input, smaller. On a loaded VM a step's own CPU time can grow many
 * times over (see cpuMsOf), and so does the quarter's, in proportion; test/parse/adversarial holds
 * its parses so.
 */
export function slowerThanLinear(text: string, run: (text: string) => unknown, limitMs: number): number | undefined {
  let ms = cpuMsOf(() => run(text));
  for (let again = 0; again < 2 && ms >= limitMs; again++) ms = Math.min(ms, cpuMsOf(() => run(text)));
  if (ms < limitMs) return undefined;
  const quarter = text.slice(0, Math.floor(text.length / 4));
  const quarterMs = Math.min(...Array.from({ length: 3 }, () => cpuMsOf(() => run(quarter))));
  return ms >= LINEAR_RATIO * quarterMs ? ms : undefined;
}
