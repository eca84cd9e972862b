import { resourceKeyOf } from './resource-key';

/** What the planner needs to know about a tool (a ToolSpec satisfies it). */
export interface WaveToolInfo {
  readonly concurrencySafe: boolean;
  /** JSON pointer into the arguments naming the resource a call touches; empty for none. */
  readonly resourceKey: string;
}

/** What the planner needs to know about a call (a ToolCall satisfies it). */
export interface PlannedCall {
  readonly name: string;
  /** The arguments text as the model emitted it. */
  readonly arguments: string;
}

/** A group of calls that run together; waves run one after another. */
export interface Wave {
  /** Indices into the turn's calls, ascending. */
  readonly calls: readonly number[];
  /** True for the wave of a call that is not concurrency-safe (or names an unknown tool): it holds that call alone. */
  readonly exclusive: boolean;
}

/** Finds a call's tool; undefined when the name is unknown (or was not offered). */
export type WaveToolLookup<T extends WaveToolInfo = WaveToolInfo> = (name: string) => T | undefined;

/**
 * The resource a safe call touches, or the resources when it may touch several (a call that may
 * fall back to a tool with a resource key of its own); undefined or none: it conflicts with no call.
 */
export type ResourceKeyOf<T extends WaveToolInfo = WaveToolInfo> = (call: PlannedCall, tool: T) => string | readonly string[] | undefined;

/**
 * The loop operations of a safe call (DESIGN section 6: its tool and primary parameter, for each
 * tool it may run on); undefined or none: it conflicts with no call by them.
 */
export type LoopOpsOf<T extends WaveToolInfo = WaveToolInfo> = (call: PlannedCall, tool: T) => readonly string[] | undefined;

/** The resource key read from the arguments text as the model emitted it. */
const keyInText: ResourceKeyOf<WaveToolInfo> = (call, tool) => resourceKeyOf(call.arguments, tool.resourceKey);

const NO_KEYS: readonly string[] = [];

interface PlannedWave extends Wave {
  readonly calls: number[];
}

/** The later of `at` and the wave after the last one that holds any of `items`. */
function pastHolders(at: number, items: readonly string[], lastHolder: ReadonlyMap<string, number>): number {
  for (const item of items) {
    const last = lastHolder.get(item);
    if (last !== undefined && last >= at) at = last + 1;
  }
  return at;
}

/**
 * Plans a turn's calls into waves (DESIGN section 3, the first seed's engine). Walking the calls
 * in order:
 * - a call that is not concurrency-safe, or names an unknown tool, opens a wave of its own that
 *   takes no other call, and closes every wave before it: no later call may run before it;
 * - a safe call joins the earliest wave that is still open (after the last exclusive wave) and
 *   does not already hold its resource key or its loop operation (any of them, when it has
 *   several: the waves before the one it joins then count as holding them all); a call without
 *   either joins the earliest open wave; when there is none, it opens a new one.
 *
 * So two calls that conflict (same resource key, same loop operation, or either one exclusive) run
 * in separate waves in their request order, and every call lands in exactly one wave. Identical
 * calls thus run one after another, each after the last one's loop record, as in sequential mode:
 * the loop stop and LOOP_BLOCKED see every repeat. Pure: it reads only its inputs. `keyOf` reads a
 * call's resource key (by default from its arguments text as emitted; the service reads it from
 * the arguments as the tool will receive them, see call-keys); `loopOf` its loop
 * operations (by default none).
 */
export function planWaves<T extends WaveToolInfo>(calls: readonly PlannedCall[], lookup: WaveToolLookup<T>, keyOf: ResourceKeyOf<T> = keyInText, loopOf?: LoopOpsOf<T>): Wave[] {
  const waves: PlannedWave[] = [];
  // The open waves that hold a key (or an operation) are always the first ones, up to the last
  // that took a call with it: a call joins the first wave past all of its keys' holders, and the
  // waves up to that one then hold them all. So the last holder of each is all the planner keeps:
  // testing every open wave for every call, and adding each call's keys to every wave up to its
  // own, was quadratic: with max_calls_per_turn raised to 4,000, a parallel turn of 4,000 reads of
  // one file held the event loop 8.4 s (0.4 s in sequential mode).
  const keyHolder = new Map<string, number>();
  const opHolder = new Map<string, number>();
  let firstOpen = 0;
  calls.forEach((call, index) => {
    const tool = lookup(call.name);
    if (!tool || !tool.concurrencySafe) {
      waves.push({ calls: [index], exclusive: true });
      firstOpen = waves.length;
      return;
    }
    const found = keyOf(call, tool);
    const keys = found === undefined ? NO_KEYS : typeof found === 'string' ? [found] : found;
    const ops = loopOf?.(call, tool) ?? NO_KEYS;
    // A holder before the first open wave is closed already: firstOpen is past it.
    const at = pastHolders(pastHolders(firstOpen, keys, keyHolder), ops, opHolder);
    if (at === waves.length) waves.push({ calls: [], exclusive: false });
    waves[at]!.calls.push(index);
    for (const key of keys) keyHolder.set(key, at);
    for (const op of ops) opHolder.set(op, at);
  });
  return waves;
}
