import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createServerMessageRates, isServerMessage, type ServerMessageRatesOptions } from './mcp-message-rate';
import { createRequestsInFlight } from './mcp-requests-in-flight';

/** Bounds of what a server may make dispatch send it (RequestGuardOptions). */
export interface RequestGuardOptions {
  /** Most answers to the server's requests being sent at a time. @default MAX_ANSWERS_IN_FLIGHT */
  readonly maxAnswersInFlight?: number;
  /** Most bytes written to a stdio server's stdin and not yet read by it. @default MAX_UNREAD_BYTES */
  readonly maxUnreadBytes?: number;
  /** How long a stdio server's stdin may take nothing, over maxUnreadBytes, before it is dropped. @default MAX_UNREAD_STALL_MS */
  readonly maxStallMs?: number;
  /** The rates of the server's own requests and notifications. @default see mcp-message-rate */
  readonly messageRates?: ServerMessageRatesOptions;
  /** Told once, when a bound is passed: the connection is to be dropped. */
  readonly onAbuse: (reason: string) => void;
  /**
   * Told how many notifications were shed (over their rate, not processed) in a window of
   * `shedReportMs` from the first shed of it, at its end: at most once a window. The connection stays.
   */
  readonly onShed?: (count: number) => void;
  /** @default SHED_REPORT_MS */
  readonly shedReportMs?: number;
}

/**
 * Most answers to a server's requests (e.g. roots/list, sampling: dispatch offers no client
 * capabilities and answers "method not found"; ping) being sent at a time. A stdio server that
 * does not read its stdin leaves each answer pending on a `drain`; a Streamable HTTP server
 * leaves each an open POST. A server that reads what it asked for never has more than a few.
 */
export const MAX_ANSWERS_IN_FLIGHT = 100;
/** Most bytes written to a stdio server and not read by it before its connection is dropped. */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;
/**
 * How long a stdio server's unread bytes may stay over MAX_UNREAD_BYTES with its stdin taking
 * nothing (as the worker pool waits for an unread assignment). Ten parallel 1 MB calls fill the
 * buffer in one tick while the server reads them at once: the bytes alone do not tell abuse.
 */
export const MAX_UNREAD_STALL_MS = 2_000;
/** The window of a report of notifications shed (onShed): one log line a second at most, with their count. */
export const SHED_REPORT_MS = 1_000;
/**
 * How long a tools/list_changed past the notifications' rate is held before it is delivered. The
 * one notification dispatch acts on is not lost (the server's tools would stay stale): one is held
 * at a time, and those shed while it is are covered by the listing it leads to.
 */
export const HELD_LIST_CHANGE_MS = 100;

const LIST_CHANGED = 'notifications/tools/list_changed';

interface StdinInternals {
  readonly _process?: {
    readonly stdin?: { readonly writableLength: number; readonly writableNeedDrain: boolean; getMaxListeners?(): number; setMaxListeners?(n: number): unknown } | null;
    readonly stdout?: { destroy(): void } | null;
  };
}

/**
 * Whether a transport's error is a line (an SSE event, a JSON body) read that is no JSON-RPC
 * message: what the SDK's deserializing throws, JSON.parse's SyntaxError or the schema's ZodError.
 */
const isUnreadable = (error: Error): boolean => error instanceof SyntaxError || error.name === 'ZodError';

/** Whether dispatch's message is its answer to a server's request (bounded as it is sent). */
const isAnswer = (message: JSONRPCMessage): boolean => 'id' in message && !('method' in message);

/**
 * Bounds what `transport` sends for its server: the answers to the server's requests in flight
 * (stdio: waiting for a `drain`; HTTP: their POST open) and, for a stdio server, the bytes written
 * to it unread while its stdin takes none (checked as answers are sent: dispatch's own requests
 * are never refused nor counted), and the rates of the server's own requests and notifications
 * and of all it sends (mcp-message-rate: answers, and the lines that are no message, which the
 * transport reports as errors, count in the total), and of its errors: those lines, and answers to no request
 * of dispatch in flight nor given up lately (mcp-requests-in-flight, kept from what `send` sends;
 * an error with no id answers none: any message read without `method` is an answer), told apart here
 * before the client reads them (and those to one in flight or given up marked so: only they prove the server
 * alive to mcp-liveness, which reads them after this). Past a bound `onAbuse` is told (once), and
 * from then on the transport neither sends answers nor delivers messages or errors, nor reads a stdio server's
 * output, until it is closed:
 * a server sending requests and never reading the answers (with the SDK's transports, one buffered
 * write and `drain` listener, or one POST, per answer) otherwise grew the heap until V8 aborted.
 * A notification past its rate is no abuse: it is shed, not delivered to the client (which would
 * handle it, ~30 us), a tools/list_changed held (HELD_LIST_CHANGE_MS), and counted for `onShed`.
 * Wraps `start` to wrap the `onmessage`, `onerror` and `onclose` the client sets before it, and `send`.
 */
export function guardRequests(transport: Transport, options: RequestGuardOptions): void {
  const maxInFlight = options.maxAnswersInFlight ?? MAX_ANSWERS_IN_FLIGHT;
  const maxUnread = options.maxUnreadBytes ?? MAX_UNREAD_BYTES;
  const maxStall = options.maxStallMs ?? MAX_UNREAD_STALL_MS;
  const rates = createServerMessageRates(options.messageRates);
  const requests = createRequestsInFlight();
  let inFlight = 0;
  let tripped = false;
  /** Notifications shed in the window under way, reported when `report` fires. */
  let shed = 0;
  let report: NodeJS.Timeout | undefined;
  /** Delivers the tools/list_changed held, if one is. */
  let held: NodeJS.Timeout | undefined;
  const stopTimers = () => {
    clearTimeout(held);
    clearTimeout(report);
  };
  const trip = (reason: string) => {
    if (tripped) return;
    tripped = true;
    stopTimers();
    // Nothing more is read from a stdio server: its output would be parsed until it exits, which a
    // server flooding it does 2 s or more after its stdin is closed (the SDK's SIGTERM).
    (transport as unknown as StdinInternals)._process?.stdout?.destroy();
    options.onAbuse(reason);
  };
  const stdin = () => (transport as unknown as StdinInternals)._process?.stdin ?? undefined;
  /** Unread bytes just after the last send, and when stdin was last seen taking some (or under the bound). */
  let lastUnread = 0;
  let takenAt = Date.now();
  /** The unread bytes now, noting whether stdin has taken some since the last send. */
  const observe = (): number => {
    const pending = stdin()?.writableLength ?? 0;
    if (pending < lastUnread || pending <= maxUnread) takenAt = Date.now();
    return pending;
  };
  const written = () => void (lastUnread = stdin()?.writableLength ?? 0);
  // Each message waiting to be written holds a `drain` listener on stdin (the SDK's send): up to
  // maxInFlight answers and as many of dispatch's own requests wait so without a leak, where Node
  // warned of one (MaxListenersExceededWarning) at 11, for every server that does not read its input.
  const raiseListeners = () => {
    const pipe = stdin();
    pipe?.setMaxListeners?.(Math.max(pipe.getMaxListeners?.() ?? 0, 2 * maxInFlight + 10));
  };

  const start = transport.start.bind(transport);
  transport.start = () => {
    const deliver = transport.onmessage;
    if (deliver) {
      const shedding = (message: JSONRPCMessage, extra: Parameters<typeof deliver>[1]) => {
        shed++;
        if (!held && 'method' in message && message.method === LIST_CHANGED) {
          held = setTimeout(() => {
            held = undefined;
            if (!tripped) deliver(message, extra);
          }, HELD_LIST_CHANGE_MS);
          held.unref();
        }
        if (report) return;
        report = setTimeout(() => {
          report = undefined;
          options.onShed?.(shed);
          shed = 0;
        }, options.shedReportMs ?? SHED_REPORT_MS);
        report.unref();
      };
      transport.onmessage = (message, extra) => {
        if (tripped) return;
        // Still delivered while under the bounds: the client reports it, and loses nothing if an id was missed here.
        // Any message without `method` is an answer (an error's id is optional): one with no id answers none.
        const verdict = rates.judge(message, !isServerMessage(message) && !requests.answered(message));
        if (verdict === 'deliver') deliver(message, extra);
        else if (verdict === 'shed') shedding(message, extra);
        else trip(verdict.abuse);
      };
    }
    // Lines that are no message never reach `onmessage`: the transport reports each here. So it
    // does each of dispatch's messages it failed to send (a POST refused 429 or 413), which only
    // dispatch's own sends bound: counted, a server rate-limiting 1,000 calls had its connection
    // dropped as abusive, every call running on it failing mid-request.
    const failed = transport.onerror;
    transport.onerror = (error) => {
      if (tripped) return;
      const verdict = isUnreadable(error) ? rates.judgeError() : 'deliver';
      if (verdict === 'deliver') failed?.(error);
      else trip(verdict.abuse);
    };
    const closed = transport.onclose;
    transport.onclose = () => {
      stopTimers();
      requests.clear();
      closed?.();
    };
    // Its stdin is there once it has started (the server's process spawned).
    return start().then(raiseListeners);
  };

  const send = transport.send.bind(transport);
  transport.send = async (message, sendOptions) => {
    const pending = observe();
    // Dispatch's own requests are always sent (they have their timeouts); only answers are bounded.
    if (!isAnswer(message)) {
      // Remembered before it is sent: over HTTP its answer is read before `send` resolves.
      requests.sending(message);
      const sent = send(message, sendOptions);
      sent.catch(() => requests.unsent(message));
      written();
      return sent;
    }
    if (tripped) return;
    if (pending > maxUnread && Date.now() - takenAt >= maxStall) return trip(`the MCP server does not read its input (${pending} bytes written to it unread, none taken for ${maxStall} ms; bound ${maxUnread})`);
    if (inFlight >= maxInFlight) return trip(`the MCP server sent requests faster than it read their answers (${inFlight} answers in flight, bound ${maxInFlight})`);
    const sent = send(message, sendOptions);
    written();
    // Over stdio an answer waits only while stdin wants a `drain` (the SDK resolves at once otherwise);
    // over HTTP, while its POST is open.
    const waiting = stdin();
    if (waiting && !waiting.writableNeedDrain) return sent;
    inFlight++;
    try {
      await sent;
    } finally {
      inFlight--;
    }
  };
}
