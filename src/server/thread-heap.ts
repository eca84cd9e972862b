import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** --max-old-space-size as node reads it (dashes or underscores; node refuses a value after a space). */
const OLD_SPACE_FLAG = /(?:^|\s)--max[-_]old[-_]space[-_]size(?:=(\d+))?(?=\s|$)/g;

/** The value of the last --max-old-space-size in `text` (an argument, or NODE_OPTIONS), if any; '' for the flag without a number. */
function lastOldSpace(text: string): string | undefined {
  let value: string | undefined;
  for (const match of text.matchAll(OLD_SPACE_FLAG)) value = match[1] ?? '';
  return value;
}

/**
 * The --max-old-space-size this process was given, in MB as written: on its command line, else in
 * NODE_OPTIONS (as the Helm chart's heapPercent sets it; node reads NODE_OPTIONS first, so the
 * command line wins); undefined without one.
 */
export function oldSpaceFlag(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string | undefined {
  return lastOldSpace(execArgv.join(' ')) ?? lastOldSpace(nodeOptions);
}

/**
 * A thread's default bound `mb`, or the main heap's when --max-old-space-size (`flag`) sets a
 * smaller one: before threads kept their own bounds under the flag, each got the flag's, and a pod
 * sized for it (the Helm chart's 512Mi: 332 MiB) would otherwise let a thread take more than before.
 * A bound given explicitly (redaction.thread_heap_mb) is taken as given.
 */
export function threadHeapDefault(mb: number, flag = oldSpaceFlag()): number {
  const main = Number(flag);
  return flag !== undefined && Number.isInteger(main) && main > 0 ? Math.min(mb, main) : mb;
}

/** Our threads starting while the flag is lifted: the last one online puts it back. */
let starting = 0;

/**
 * Starts a worker thread (`start`, which gives it `resourceLimits`) with its own heap bound. V8
 * applies the process's --max-old-space-size to every heap it makes, over a thread's own
 * `maxOldGenerationSizeMb` (nodejs/node#43991, documented by node, open): under the Helm chart, a
 * thread of ours bounded at 160 or 512 MB got the main heap's bound instead. So the flag is lifted
 * (set to 0, V8's "unset") while the thread starts, and put back once it is online (its heap made:
 * it runs JavaScript) or gone, so that threads the embedding process starts itself keep the flag.
 * The main heap keeps its bound: V8 reads the flag only when it makes a heap (checked: a process at
 * --max-old-space-size=100 still ran out at 100 MB with the flag lifted).
 */
export function startWithOwnHeap(start: () => Worker): Worker {
  const flag = oldSpaceFlag();
  if (flag === undefined || flag === '') return start();
  if (starting++ === 0) setFlagsFromString('--max-old-space-size=0');
  let thread: Worker;
  try {
    thread = start();
  } catch (error) {
    putBack(flag);
    throw error;
  }
  let started = false;
  const heapMade = () => {
    if (started) return;
    started = true;
    putBack(flag);
  };
  thread.once('online', heapMade);
  thread.once('exit', heapMade);
  return thread;
}

function putBack(flag: string): void {
  if (--starting === 0) setFlagsFromString(`--max-old-space-size=${flag}`);
}
