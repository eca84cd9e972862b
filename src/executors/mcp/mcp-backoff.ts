/** Most jitter added to a reconnection delay, as a fraction of it (mcp-config bounds the delays for it). */
const JITTER = 0.2;

/**
 * The delays of one MCP server's reconnection loop: doubled per failure from reconnect_initial_ms
 * up to reconnect_max_ms, plus up to JITTER.
 *
 * A connection restarts them once it has proved itself: it answered a call, or stayed up
 * reconnect_max_ms. One reset as soon as the server's tools were listed restarted a server that
 * exits a moment after (a setting read late, a failing background task) every reconnect_initial_ms
 * for as long as dispatch ran, a process start each time; now such a crash loop is restarted at
 * most once per reconnect_max_ms in the long run.
 */
export interface ReconnectBackoff {
  /** The delay before the next attempt, in ms; counts one more failure. */
  next(): number;
  /** The connection is up (its tools listed). */
  up(): void;
  /** A call was answered: the connection works, and the drops for abuse are forgiven. */
  answered(): void;
  /** The connection is down: the delays restart if it proved itself. */
  down(): void;
  /**
   * The connection is dropped (or ended while connecting) for abuse: the next delay counts at least
   * as many failures as such drops since a call was last answered, whatever `down` restarts.
   */
  abused(): void;
}

export function createReconnectBackoff(initialMs: number, maxMs: number): ReconnectBackoff {
  let failures = 0;
  let abuses = 0;
  /** The least failures the next delay counts (abused). */
  let floor = 0;
  /** When the connection came up, while it is. */
  let upSince: number | undefined;
  /**
   * A call was answered since the last drop. Kept apart from upSince: a call may be answered before
   * the connection counts as up (its tools still listed; `connected` holds from the handshake on),
   * and `up` then lost the proof: the next drop kept the grown delay (1.6 s where 200 ms was due).
   */
  let proved = false;
  return {
    next() {
      failures = Math.max(failures, floor);
      floor = 0;
      const base = Math.min(maxMs, initialMs * 2 ** Math.min(failures, 30));
      failures++;
      return Math.round(base * (1 + JITTER * Math.random()));
    },
    up: () => void (upSince ??= performance.now()),
    answered() {
      abuses = 0;
      proved = true;
    },
    down() {
      if (proved || (upSince !== undefined && performance.now() - upSince >= maxMs)) failures = 0;
      upSince = undefined;
      proved = false;
    },
    abused: () => void (floor = Math.max(floor, ++abuses)),
  };
}
