import type { ResolvedTool } from '../registry';
import type { ScratchHold } from '../session';

/** How far an attempt's request has got: not yet handed to the tool, or handed to it. */
export type Delivery = 'pending' | 'sent';

/** What a tool's executor is told about the call it runs. */
export interface ExecutorContext {
  readonly tenant: string;
  readonly sessionId: string;
  readonly toolCallId: string;
  /** Counts from 1. */
  readonly attempt: number;
  readonly idempotencyKey: string;
  /**
   * A key for caches in this process (the memo cache's): tenant, session, tool and every argument,
   * whatever the tool's `key_fields` (which name what makes two side effects the same; two reads
   * that differ anywhere are different reads), not hashed when short. Never sent anywhere.
   */
  readonly localKey: string;
  /** Fires on the tool's timeout, the client's cancel, the RPC deadline or shutdown. */
  readonly signal: AbortSignal;
  /**
   * The same abort as `signal`, as a listener that runs once with the reason (at once if the
   * attempt is already aborted); returns the unsubscribe. Costs no AbortController: executors on
   * the hot path use it rather than `signal`.
   */
  onAbort(listener: (reason: unknown) => void): () => void;
  /** Epoch milliseconds by which the tool must answer. */
  readonly deadline: number;
  /** W3C trace context of the attempt, to pass on. */
  readonly traceparent?: string;
  /** The caller's W3C `tracestate`, passed on with `traceparent` (vendors' entries, sampling thresholds). */
  readonly tracestate?: string;
  /**
   * Told by an executor that knows whether its request has reached the tool: 'pending' as it
   * starts, 'sent' once the request is handed over (an HTTP request written to a connected socket).
   * A timeout or cancel while 'pending' ends the attempt before execution: the tool cannot have
   * run. An executor that never calls it is taken to have sent its request at once.
   */
  delivery?(state: Delivery): void;
  /**
   * Told by an executor that reaches its tool over HTTP the status of the answer it acts on (after
   * redirects), success or not: the attempt's span carries it as `http.response.status_code`.
   */
  responded?(status: number): void;
  /**
   * Told by an executor that, as a side-effecting request it had sent is aborted (the tool's
   * timeout), keeps its promise pending for the tool's own answer, and settles it within a bound
   * of its own (a worker's, which need not stop at its cancel): once the tool answers, the answer
   * replaces the attempt's OUTCOME_UNKNOWN record (late-answer.ts). Absent from some contexts.
   * `answered`: the tool had answered in time, and only dispatch's own work on its output (its
   * redaction, in the redaction worker) was cut off.
   */
  lateAnswerPending?(answered?: boolean): void;
  /**
   * The session's scratch directory, created on first use. A built-in's is held until the
   * built-in settles: expiry and the maxDirs bound pass over it meanwhile (EndSession does not).
   */
  scratchDir(): Promise<string>;
  /**
   * The session's scratch directory, held until released; what a built-in's scratchDir() is made
   * of (`builtin-executor.ts`). Absent from a context with no scratch directories behind it.
   */
  holdScratchDir?(): Promise<ScratchHold>;
}

/**
 * Runs one kind of tool. Returns the tool's output text; throws a DispatchError classified by
 * phase when the tool could not be reached, failed or answered an error. An abort of
 * `ctx.signal` may surface as any error: the pipeline decides what it means.
 */
export interface Executor {
  execute(tool: ResolvedTool, args: unknown, ctx: ExecutorContext): Promise<string>;
  /**
   * This executor's tool sources whose tools are not known yet (an MCP server that has not
   * connected since the start), for an UNKNOWN_TOOL message to name.
   */
  unlisted?(): readonly UnlistedSource[];
}

/** A source of tools not listed yet: `source` as a message names it (`MCP server "files"`), `prefix` what its tools' names start with ("" for any). */
export interface UnlistedSource {
  readonly source: string;
  readonly prefix: string;
}

/** The executors a server can run, by the ToolSpec executor case (`http`, `builtin`, ...). */
export type ExecutorSet = ReadonlyMap<string, Executor>;
