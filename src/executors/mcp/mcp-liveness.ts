import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MAX_TIMER_MS } from '../../options/limits';

/** What a liveness check is told of its connection. */
export interface LivenessOptions {
  /** How long a ping may go unanswered (ping_timeout_ms). */
  readonly pingTimeoutMs: number;
  /** Whether `from` is the connection's connected client (a retired one is never checked). */
  readonly isCurrent: (from: Client) => boolean;
  /** Drops `from` (the connection's `dropped`). */
  readonly drop: (from: Client, why: string) => void;
}

/** Finds a hung server after a call timed out, without dropping one that is only busy. */
export interface Liveness {
  /** Notes every message `transport` receives for `from`; call before the client connects it. */
  watch(from: Client, transport: Transport): void;
  /** Notes a call sent on `from` until `deadline` (epoch ms); returns its end. */
  sent(from: Client, deadline: number): () => void;
  /**
   * Notes a call on `from` sent at `sentAt` (epoch ms) and abandoned unanswered by its client:
   * `from` is probed once the tool's `timeoutMs` has passed since then unless it answered a call first.
   */
  abandoned(from: Client, sentAt: number, timeoutMs: number): void;
  /**
   * Checks `from` after a call on it, sent at `sentAt` (epoch ms), got no answer within the tool's
   * own timeout: a strike unless the server answered a call since `sentAt` or the call was sent
   * before the last strike was counted. Without `sentAt` (a call its client abandoned), a ping only.
   */
  probe(from: Client, sentAt?: number): void;
  /** Ends at once every watch and check of `from`, retired or closed: none holds it or pings it. */
  forget(from: Client): void;
  /** Counts of what is held (abandoned calls watched, checks, call requests awaiting an answer), for checking nothing outlives its client. */
  diagnostics(current: Client | undefined): Record<string, number>;
  /** Cancels a check waiting on calls in flight. */
  close(): void;
}

/**
 * How many strikes make a server that still answers pings suspected of being wedged: its calls
 * queue behind one hung inside it (a server running one call at a time, or out of its workers) and
 * every later call times out, however long it runs. A strike is a call that reached the tool's own
 * timeout with no call answered by the server since it was sent, and sent after the last strike
 * was counted: calls timing out together (one slow tool called by many sessions at once) are one
 * strike, so only timeouts repeated over time count. A call answered clears them. A suspected
 * server is dropped (it is started again) only when one more call, sent after the suspicion,
 * reaches its timeout unanswered: a wedged server keeps getting calls; an idle one is left alone.
 * Calls abandoned by their clients (cancel, a client deadline) are no strikes: the SDK's client
 * sends notifications/cancelled and the SDK's server then never answers them, however well it is.
 */
export const WEDGED_AFTER = 3;

/**
 * Most ids of a client's call requests kept to tell a call's answer from a ping's. A call's id is
 * dropped when it is answered or cancelled; one never answered nor cancelled (a server that drops
 * requests) stays: past this, the oldest ids are forgotten (their late answer no longer counts).
 */
const MAX_TRACKED_CALLS = 1_024;

/** A call abandoned by its client, watched until its tool's timeout. */
interface Watch {
  readonly from: Client;
  timer?: NodeJS.Timeout;
}

interface Check {
  readonly from: Client;
  /** When its ping was sent: a response from the server after it proves the server alive. */
  readonly since: number;
  /**
   * What proves the server well: 'any' response (is it alive?), or once it answered the ping with
   * more than WEDGED_AFTER strikes, only a 'call' answered (is it serving calls?).
   */
  proof: 'any' | 'call';
  timer?: NodeJS.Timeout;
  /** When the drop was decided (epoch ms): it waits for the calls in flight, at most the longest call's span from then. */
  decidedAt?: number;
}

/** A server's strikes (see WEDGED_AFTER) and when the last was counted (epoch ms). */
interface Strikes {
  readonly count: number;
  readonly at: number;
}

type Id = string | number;
/** The id of `message` if it is a request (`method` and `id`) for `method`, else undefined. */
const requestId = (message: unknown, method: string): Id | undefined => {
  const m = message as Record<string, unknown> | null;
  return m !== null && typeof m === 'object' && m.method === method && (typeof m.id === 'string' || typeof m.id === 'number') ? m.id : undefined;
};

/** The id of the request a `notifications/cancelled` message cancels, else undefined. */
const cancelledId = (message: unknown): Id | undefined => {
  const m = message as { method?: unknown; params?: { requestId?: unknown } } | null;
  const id = m !== null && typeof m === 'object' && m.method === 'notifications/cancelled' ? m.params?.requestId : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
};

/** Whether `message` is a response (an answer to one of our requests), not a notification or a request. */
function isResponse(message: unknown): boolean {
  if (message === null || typeof message !== 'object') return false;
  const m = message as Record<string, unknown>;
  return m.id !== undefined && m.method === undefined && ('result' in m || 'error' in m);
}

/**
 * A server that got a call it did not answer in time is pinged (one check at a time), and is
 * dropped only when it is hung: no response from it (an answer, the ping's late answer) since
 * the ping was sent, and none until the calls in flight have passed their deadlines (read again
 * as the wait ends, so a call sent meanwhile within its deadline is not cut; the wait is at most
 * the longest call's span, as a wedged server may keep getting calls). A server that serves one
 * request at a time cannot answer a ping while it works on a long call: dropping it then failed
 * every other call in flight on it (another session's, which the server had not even read) as
 * lost mid-request.
 * Notifications prove nothing: a server stuck on one request may keep sending them. Progress
 * included: dispatch asks for none (its calls carry no progressToken, so a server may send none),
 * and a call past its timeout_ms is past the most the MCP spec says to wait whatever the progress.
 * A call its
 * client abandoned (cancel, a deadline shorter than the tool's timeout) is still watched: with no
 * call answered by the tool's timeout since it was sent, the server is pinged (a hung server is
 * found though every client gives up first; a busy one answered a call meanwhile).
 *
 * A response proves the process alive, not that it serves calls: a server that answers pings
 * while its calls queue behind one hung inside it (ignoring the cancel the SDK sends) answers
 * every ping, and every call on it times out for as long as it runs. Past WEDGED_AFTER strikes a
 * ping answered is not enough: the server is dropped unless it answers a call before the calls in
 * flight pass their deadlines.
 */
export function createLiveness(options: LivenessOptions): Liveness {
  const heardAt = new WeakMap<Client, number>();
  /** When the server last answered a call (tools/call), and the ids of its calls awaiting an answer. */
  const answeredAt = new WeakMap<Client, number>();
  const callIds = new WeakMap<Client, Set<Id>>();
  const strikes = new WeakMap<Client, Strikes>();
  /** The longest span (deadline less send time) of a call sent on each client: the most a drop waits for calls in flight. */
  const longest = new WeakMap<Client, number>();
  const inFlight = new Set<{ readonly from: Client; readonly deadline: number }>();
  /** Abandoned calls waiting for their tool's timeout, each ended by a call answered by its client's server, or its client's retirement. */
  const watches = new Set<Watch>();
  let check: Check | undefined;

  const heardSince = (c: Check) => ((c.proof === 'any' ? heardAt : answeredAt).get(c.from) ?? -1) >= c.since;
  const answeredSince = (from: Client, at: number) => (answeredAt.get(from) ?? -1) >= at;
  const end = (c: Check) => {
    clearTimeout(c.timer);
    if (check === c) check = undefined;
  };
  const unwatch = (w: Watch) => {
    clearTimeout(w.timer);
    watches.delete(w);
  };
  /** Drops `c.from` unless it was heard from; waits first for calls in flight within their deadlines. */
  const decide = (c: Check, why: string) => {
    if (check !== c) return;
    if (heardSince(c) || !options.isCurrent(c.from)) return end(c);
    c.decidedAt = Date.now();
    waitThenDrop(c, why, false);
  };
  /**
   * Drops `c.from` once its calls in flight (read now) have passed their deadlines, unless it is
   * heard from first; at most the longest call's span after the decision (a wait past
   * MAX_TIMER_MS in steps).
   */
  const waitThenDrop = (c: Check, why: string, waited: boolean) => {
    let last = 0;
    for (const call of inFlight) if (call.from === c.from) last = Math.max(last, call.deadline);
    const until = Math.min(last, c.decidedAt! + (longest.get(c.from) ?? 0));
    const wait = until - Date.now();
    if (wait <= 0) {
      end(c);
      const nor = c.proof === 'any' ? 'nor anything' : 'nor answered a call';
      if (!heardSince(c) && options.isCurrent(c.from)) options.drop(c.from, waited ? `${why}, ${nor} until the calls in flight passed their deadlines` : why);
      return;
    }
    clearTimeout(c.timer);
    c.timer = setTimeout(() => {
      c.timer = undefined;
      if (check === c) waitThenDrop(c, why, true);
    }, Math.min(wait, MAX_TIMER_MS));
    c.timer.unref();
  };

  const liveness: Liveness = {
    watch(from, transport) {
      const calls = new Set<Id>();
      callIds.set(from, calls);
      const send = transport.send.bind(transport);
      transport.send = (message, sendOptions) => {
        const id = requestId(message, 'tools/call');
        if (id !== undefined) {
          calls.add(id);
          if (calls.size > MAX_TRACKED_CALLS) calls.delete(calls.values().next().value!);
        }
        // The SDK's client cancels every call it gives up on (abort, timeout), and the SDK's
        // server then never answers it: its id would be held for nothing.
        const cancelled = cancelledId(message);
        if (cancelled !== undefined) calls.delete(cancelled);
        return send(message, sendOptions);
      };
      const start = transport.start.bind(transport);
      transport.start = () => {
        const deliver = transport.onmessage;
        transport.onmessage = (message, extra) => {
          if (isResponse(message)) {
            const now = Date.now();
            heardAt.set(from, now);
            const call = calls.delete((message as { id: Id }).id);
            if (call) {
              answeredAt.set(from, now);
              strikes.delete(from);
              // It serves calls: abandoned calls' watches end here.
              for (const w of watches) if (w.from === from) unwatch(w);
            }
            // Proof of life: a check waiting on calls in flight ends here (a wedged one's, on a call answered).
            if (check?.from === from && check.timer !== undefined && (call || check.proof === 'any')) end(check);
          }
          deliver?.(message, extra);
        };
        return start();
      };
    },
    sent(from, deadline) {
      const call = { from, deadline };
      longest.set(from, Math.max(longest.get(from) ?? 0, deadline - Date.now()));
      inFlight.add(call);
      return () => void inFlight.delete(call);
    },
    abandoned(from, sentAt, timeoutMs) {
      if (!options.isCurrent(from) || answeredSince(from, sentAt)) return;
      const w: Watch = { from };
      watches.add(w);
      const due = sentAt + timeoutMs;
      const wait = () => {
        const left = due - Date.now();
        if (left > 0) {
          w.timer = setTimeout(wait, Math.min(left, MAX_TIMER_MS));
          w.timer.unref();
          return;
        }
        unwatch(w);
        // A ping only: an abandoned call's silence is no strike (see WEDGED_AFTER).
        if (!answeredSince(from, sentAt)) liveness.probe(from);
      };
      wait();
    },
    probe(from, sentAt) {
      if (check !== undefined && !options.isCurrent(check.from)) end(check);
      if (!options.isCurrent(from)) return;
      const last = strikes.get(from);
      if (sentAt !== undefined && !answeredSince(from, sentAt) && (last === undefined || sentAt > last.at)) strikes.set(from, { count: (last?.count ?? 0) + 1, at: Date.now() });
      if (check !== undefined) return;
      const c: Check = { from, since: Date.now(), proof: 'any' };
      check = c;
      from.ping({ timeout: options.pingTimeoutMs }).then(
        () => {
          const n = strikes.get(from)?.count ?? 0;
          if (n <= WEDGED_AFTER || check !== c) return end(c);
          c.proof = 'call';
          decide(c, `it answered a ping but none of the last ${n} calls on it, each sent after the last timed out and unanswered at its timeout (a call hung inside the server may hold the rest)`);
        },
        (error: Error) => decide(c, `it did not answer a ping within ${options.pingTimeoutMs} ms after a call got no answer (${error.message})`),
      );
    },
    forget(from) {
      if (check?.from === from) end(check);
      for (const w of watches) if (w.from === from) unwatch(w);
      callIds.get(from)?.clear();
      strikes.delete(from);
    },
    diagnostics: (current) => ({ livenessWatches: watches.size, livenessChecks: check === undefined ? 0 : 1, callsAwaitingAnswer: current ? (callIds.get(current)?.size ?? 0) : 0 }),
    close() {
      if (check) end(check);
      for (const w of watches) unwatch(w);
    },
  };
  return liveness;
}
