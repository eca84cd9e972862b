import { checkInteger } from '../../options';

/** Bounds of worker streams and of routing calls to workers on other replicas. */
export interface WorkerOptions {
  /** A worker silent this long is gone, and so are its assignments. @default 15000 */
  readonly heartbeatTimeoutMs?: number;
  /** How often silent workers are looked for. @default 1000 */
  readonly sweepIntervalMs?: number;
  /** Most tools one `hello` may declare. @default 256 */
  readonly maxToolsPerHello?: number;
  /** How often a replica re-advertises the tools its workers host (Redis only). @default 5000 */
  readonly advertiseIntervalMs?: number;
  /** How long an advertisement lives without a refresh (Redis only). @default 15000 */
  readonly routeTtlMs?: number;
  /** Extra wait past a call's deadline for a reply from another replica. @default 1000 */
  readonly relayGraceMs?: number;
  /**
   * On a Redis Cluster, longest wait for the count of another replica's subscribers (asked of
   * every node when a read-only call's PUBLISH reached no one); past it the call counts as
   * delivered. @default 1000
   */
  readonly subscriberCountTimeoutMs?: number;
  /**
   * On a Redis Cluster, longest wait for the master relaying calls to answer a PUBLISH; past it
   * the next messages go through another master, and a call whose assignment it held waits for
   * its reply (a read-only one is sent again first). Also, anywhere, the longest wait for Redis
   * at close (withdrawing this replica's routes, then QUIT). @default 1000
   */
  readonly publishStallMs?: number;
  /**
   * Assignments from other replicas remembered after they ended or were cancelled, until their
   * deadline, so that a copy arriving late (a publish that stalled and was sent again, a cancel
   * that overtook its assignment) is not run; past it the oldest are forgotten. @default 10000
   */
  readonly maxRememberedAssignments?: number;
  /**
   * How often the relay's subscription publishes a probe to itself (Redis only); each must be
   * heard before the next goes out (see createWatchedSubscriber). Also how often the replicas
   * running calls this one awaits are checked for a subscriber (see createHostWatch). @default 1000
   */
  readonly probeIntervalMs?: number;
  /**
   * Probes in a row Redis took but the relay's subscription did not hear before it is deemed deaf
   * (its Cluster node stalled, or a half-open connection) and moved to a new connection; two more
   * than this many checks in a row finding no subscriber on a replica's channel deem it gone, and
   * the calls it runs for this one fail. @default 2
   */
  readonly maxMissedProbes?: number;
  /**
   * Bytes of assignments a worker may leave unread (written to its stream, held by dispatch until
   * the worker reads them); past it the worker is ended RESOURCE_EXHAUSTED and its calls fail as
   * when it disconnects. Past an eighth of it, other workers of the tool are picked first.
   * @default 16777216 (16 MiB)
   */
  readonly maxUnsentBytes?: number;
}

/** Worker options with every default filled in. */
export type ResolvedWorkerOptions = Required<WorkerOptions>;

/** Fills the defaults and rejects values that are not positive integers, naming the option. */
export function resolveWorkerOptions(partial: WorkerOptions = {}): ResolvedWorkerOptions {
  const resolved: ResolvedWorkerOptions = {
    heartbeatTimeoutMs: partial.heartbeatTimeoutMs ?? 15_000,
    sweepIntervalMs: partial.sweepIntervalMs ?? 1_000,
    maxToolsPerHello: partial.maxToolsPerHello ?? 256,
    advertiseIntervalMs: partial.advertiseIntervalMs ?? 5_000,
    routeTtlMs: partial.routeTtlMs ?? 15_000,
    relayGraceMs: partial.relayGraceMs ?? 1_000,
    subscriberCountTimeoutMs: partial.subscriberCountTimeoutMs ?? 1_000,
    publishStallMs: partial.publishStallMs ?? 1_000,
    maxRememberedAssignments: partial.maxRememberedAssignments ?? 10_000,
    probeIntervalMs: partial.probeIntervalMs ?? 1_000,
    maxMissedProbes: partial.maxMissedProbes ?? 2,
    maxUnsentBytes: partial.maxUnsentBytes ?? 16 * 1024 * 1024,
  };
  for (const [name, value] of Object.entries(resolved)) {
    checkInteger(`worker.${name}`, value, {}, String);
  }
  if (resolved.routeTtlMs <= resolved.advertiseIntervalMs) {
    throw new RangeError(`worker.routeTtlMs (${resolved.routeTtlMs}) must be longer than worker.advertiseIntervalMs (${resolved.advertiseIntervalMs})`);
  }
  return resolved;
}
