// CPU time, for bounds on work that must hold on a busy machine: wall time on two shared cores
// grows with whatever else runs (a scan of 1 MiB took 4-5x its idle time with five busy loops
// beside the suite), while the CPU a step spends does not. A superlinear step shows in both.

/** CPU milliseconds (user and system, every thread of this process) spent since `since`. */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1_000;
}

/** CPU milliseconds spent running `work` to its end (synchronous work only). */
export function cpuMsOf(work: () => void): number {
  const started = process.cpuUsage();
  work();
  return cpuMsSince(started);
}
