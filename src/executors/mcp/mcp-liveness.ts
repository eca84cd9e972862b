import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MAX_TIMER_MS } from '../../options/limits';
import { answersRequestInFlight } from './mcp-requests-in-flight';

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
  /**
   * Notes the answers to requests in flight (or given up lately) `transport` receives for `from`;
   * call before the client connects it, after mcp-request-guard guards it (the guard tells those
   * answers as it reads them).
   */
  watch(from: Client, transport: Transport): void;
  /** Notes a call sent on `from` until `deadline` (epoch ms); returns its end. */
  sent(from: Client, deadline: number): () => void;
  /**
   * Notes a call on `from` sent at `sentAt` (epoch ms) and abandoned unanswered by its client:
   * `from` is probed once the tool's `timeoutMs` has passed since then unless a response came first.
   */
  abandoned(from: Client, sentAt: number, timeoutMs: number): void;
  /** Checks `from` after a call on it got no answer within the tool's own timeout. */
  probe(from: Client): void;
  /** Ends at once every watch and check of `from`, retired or closed: none holds it or pings it. */
  forget(from: Client): void;
  /** The watches and checks held now (bounded: they must not grow with calls). */
  diagnostics(): Record<string, number>;
  /** Cancels a check waiting on calls in flight. */
  close(): void;
}

/** A call abandoned by its client, watched until its tool's timeout. */
interface Watch {
  readonly from: Client;
  timer?: NodeJS.Timeout;
}

interface Check {
  readonly from: Client;
  /** When its ping was sent: a response from the server after it proves the server alive. */
  readonly since: number;
  timer?: NodeJS.Timeout;
}

/**
 * A server that got a call it did not answer in time is pinged (one check at a time), and is
 * dropped only when it is hung: no answer from it to a request in flight or given up (a call's, the ping's) since
 * the ping was sent, and none until the last call that was in flight when the ping went
 * unanswered has passed its own deadline. A server that serves one request at a time cannot
 * answer a ping while it works on a long call: dropping it then failed every other call in flight
 * on it (another session's, which the server had not even read) as lost mid-request.
 * Notifications prove nothing: a server stuck on one request may keep sending them; nor do answers
 * to no request in flight (ids never used, answered already), which a hung server may keep sending
 * under their rate (mcp-message-rate). The one late answer to a request given up (a ping's or a
 * call's past its timeout, or cancelled: the SDK sends notifications/cancelled) within a minute
 * does: the server read its input and answered, and it can send no more than one per request
 * dispatch gave up (at most 4,096 remembered: mcp-requests-in-flight). A call its
 * client abandoned (cancel, a deadline shorter than the tool's timeout) is still watched: with no
 * response by the tool's timeout since it was sent, the server is pinged (a hung server is found
 * though every client gives up first; a busy one answered something meanwhile).
 */
export function createLiveness(options: LivenessOptions): Liveness {
  const heardAt = new WeakMap<Client, number>();
  const inFlight = new Set<{ readonly from: Client; readonly deadline: number }>();
  /** Abandoned calls waiting for their tool's timeout, each ended by a response from its client's server. */
  const watches = new Set<Watch>();
  let check: Check | undefined;

  const heardSince = (c: Check) => (heardAt.get(c.from) ?? -1) >= c.since;
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
    let last = 0;
    for (const call of inFlight) if (call.from === c.from) last = Math.max(last, call.deadline);
    waitThenDrop(c, last, why);
  };
  /** Drops `c.from` at `until` unless it is heard from first (a wait past MAX_TIMER_MS in steps). */
  const waitThenDrop = (c: Check, until: number, why: string) => {
    const wait = until - Date.now();
    if (wait <= 0) {
      end(c);
      if (!heardSince(c) && options.isCurrent(c.from)) options.drop(c.from, until === 0 ? why : `${why}, nor anything until the calls in flight then passed their deadlines`);
      return;
    }
    clearTimeout(c.timer);
    c.timer = setTimeout(() => {
      c.timer = undefined;
      if (check === c) waitThenDrop(c, until, why);
    }, Math.min(wait, MAX_TIMER_MS));
    c.timer.unref();
  };

  const liveness: Liveness = {
    watch(from, transport) {
      const start = transport.start.bind(transport);
      transport.start = () => {
        const deliver = transport.onmessage;
        transport.onmessage = (message, extra) => {
          if (answersRequestInFlight(message)) {
            heardAt.set(from, Date.now());
            // Proof of life: a check waiting on calls in flight ends here, and so do abandoned calls' watches.
            if (check?.from === from && check.timer !== undefined) end(check);
            for (const w of watches) if (w.from === from) unwatch(w);
          }
          deliver?.(message, extra);
        };
        return start();
      };
    },
    sent(from, deadline) {
      const call = { from, deadline };
      inFlight.add(call);
      return () => void inFlight.delete(call);
    },
    abandoned(from, sentAt, timeoutMs) {
      if (!options.isCurrent(from) || (heardAt.get(from) ?? -1) >= sentAt) return;
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
        if ((heardAt.get(from) ?? -1) < sentAt) liveness.probe(from);
      };
      wait();
    },
    probe(from) {
      if (check !== undefined && !options.isCurrent(check.from)) end(check);
      if (check !== undefined || !options.isCurrent(from)) return;
      const c: Check = { from, since: Date.now() };
      check = c;
      from.ping({ timeout: options.pingTimeoutMs }).then(
        () => end(c),
        (error: Error) => decide(c, `it did not answer a ping within ${options.pingTimeoutMs} ms after a call got no answer (${error.message})`),
      );
    },
    forget(from) {
      if (check?.from === from) end(check);
      for (const w of watches) if (w.from === from) unwatch(w);
    },
    diagnostics: () => ({ livenessWatches: watches.size, livenessChecks: check === undefined ? 0 : 1 }),
    close() {
      if (check) end(check);
      for (const w of watches) unwatch(w);
    },
  };
  return liveness;
}
