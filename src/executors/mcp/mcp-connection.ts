import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ErrorKind } from '../../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../../log';
import { MAX_TIMER_MS } from '../../options/limits';
import type { Delivery } from '../executor';
import { linkAbort } from './mcp-abort-link';
import { createReconnectBackoff } from './mcp-backoff';
import type { McpServerConfig } from './mcp-config';
import { connectQuietly, guardServer } from './mcp-chatter';
import { clientDiagnostics } from './mcp-diagnostics';
import { classifyMcpError, isStreamLoss, notConnectedError, noteDropped } from './mcp-errors';
import { createOpenClients, type McpTransport } from './mcp-open-clients';
import { createLiveness } from './mcp-liveness';
import type { McpToolResult } from './mcp-result';
import type { SentHooks } from './mcp-sent-hooks';
import { newMcpTransport } from './mcp-transport';
import { coalesced, listAllTools, listDigest } from './mcp-tool-list';
import { forgetUnsent } from './mcp-unsent-requests';

/** What a call to an MCP tool is given. */
export interface McpCallContext {
  readonly signal: AbortSignal;
  /** Epoch ms by which the tool must answer. */
  readonly deadline: number;
  readonly traceparent?: string;
  readonly tracestate?: string;
  /** More entries of the request's `_meta` (mcp-executor's: the idempotency key, the attempt). */
  readonly meta?: Readonly<Record<string, string | number>>;
  /**
   * Told 'pending' as the call starts (it may wait for a reconnection) and 'sent' just before its
   * request is handed to the client: a call that times out or is cancelled before was not run.
   * @see ExecutorContext.delivery
   */
  delivery?(state: Delivery): void;
  /**
   * Whether `signal` was aborted by the tool's own timeout (timeout_ms), after which the server is
   * pinged (it may be hung); an abort otherwise (the client's cancel or deadline, shutdown) says
   * nothing of the server. Absent: no abort is the tool's own timeout.
   */
  timedOut?(): boolean;
  /** The tool's own timeout (timeout_ms): a call its client abandons unanswered is watched this long from when it was sent. */
  readonly timeoutMs?: number;
}

/** The one long-lived client of an MCP server, replaced only when the connection drops. */
export interface McpConnection {
  readonly config: McpServerConfig;
  connected(): boolean;
  /** Makes the first connection attempt; later ones follow with backoff until `close`. */
  start(): Promise<void>;
  call(tool: string, args: Record<string, unknown>, ctx: McpCallContext): Promise<McpToolResult>;
  /** Counts of what the client holds (pending requests, stream listeners), which must not grow per call. */
  diagnostics(): Record<string, number>;
  /** Stops reconnecting and resolves once every server process it started has exited (bounded). */
  close(): Promise<void>;
}

/** Hooks of a connection. */
export interface McpConnectionOptions {
  readonly logger: Logger;
  /** Told of the server's tools (as listed, unchecked) after every connection and every list change; awaited (a first attempt ends with them registered). `superseded`: a newer list is to come (a change told since, or another connection). */
  readonly onTools: (tools: unknown[], superseded: () => boolean) => void | Promise<void>;
  /** Largest answer read from a Streamable HTTP server (RequestScopedFetchOptions.maxAnswerBytes). @default DEFAULT_MAX_ANSWER_BYTES (64 MiB) */
  readonly maxAnswerBytes?: number;
}

const CLIENT_INFO = { name: 'dispatch', version: '0.1.0' };

type State = 'idle' | 'connecting' | 'connected' | 'waiting' | 'closed';

/** Creates the connection of one configured server (stdio command or Streamable HTTP URL). */
export function createMcpConnection(config: McpServerConfig, options: McpConnectionOptions): McpConnection {
  const { logger } = options;
  const server = config.name;
  const target = config.url ?? config.command!.join(' ');
  let state: State = 'idle';
  let client: Client | undefined;
  let transport: McpTransport | undefined;
  /** What tells each call over Streamable HTTP that its request reached the server, by client. */
  const hooksOf = new WeakMap<Client, SentHooks>();
  /** The client of the one connection attempt under way (the loop is in `connect`). */
  let attempt: Client | undefined;
  // A retired client's watches end with it: none keeps its objects or pings it (see Liveness.forget).
  const open = createOpenClients({ onRetire: (from) => liveness.forget(from) });
  const backoff = createReconnectBackoff(config.reconnectInitialMs, config.reconnectMaxMs);
  /** The next attempt of the reconnection loop, while `waiting`; never more than one. */
  let timer: NodeJS.Timeout | undefined;
  /** When the scheduled reconnection attempt is due (epoch ms), while `waiting`. */
  let attemptDueAt = 0;
  /** Calls waiting for a reconnection, told of every change of state. */
  const waiters = new Set<() => void>();
  /** Pings a server after a call on it timed out; drops it only when it is hung (see createLiveness). */
  const liveness = createLiveness({ pingTimeoutMs: config.pingTimeoutMs, isCurrent: (from) => from === client && state === 'connected', drop: (from, why) => dropped(from, why) });
  const isClosed = () => state === 'closed';

  function setState(next: State): void {
    state = next;
    for (const waiter of [...waiters]) waiter();
  }

  /**
   * The connected client, after waiting (up to `reconnectWaitMs` and the call's deadline) for a
   * reconnection that is under way or due within that time; undefined when none came. Like a
   * gRPC channel, which holds calls while it connects and fails them at once in backoff.
   */
  function reconnected(ctx: McpCallContext): Promise<Client | undefined> {
    const until = Math.min(ctx.deadline, Date.now() + config.reconnectWaitMs);
    const worthWaiting = () => state === 'connecting' || (state === 'waiting' && attemptDueAt < until);
    if (!worthWaiting() || ctx.signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = () => {
        waiters.delete(check);
        clearTimeout(timeout);
        ctx.signal.removeEventListener('abort', done);
        resolve(state === 'connected' ? client : undefined);
      };
      const check = () => {
        if (state === 'connected' || !worthWaiting()) done();
      };
      const timeout = setTimeout(done, until - Date.now());
      ctx.signal.addEventListener('abort', done, { once: true });
      waiters.add(check);
    });
  }

  /** Schedules the loop's next attempt; a no-op while one is due or under way (one loop only). */
  function scheduleReconnect(): void {
    if (isClosed() || timer !== undefined || attempt !== undefined) return;
    const delay = backoff.next();
    attemptDueAt = Date.now() + delay;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
  }

  /** Drops `from`, connected, for `why`; `said`: a stdio server's exit and the end of its stderr (mcp-last-words). */
  function dropped(from: Client, why: string, said?: { exit?: string; stderr?: string }): void {
    if (from !== client || state !== 'connected') return;
    noteDropped(from, why);
    backoff.down();
    client = undefined;
    logger.warn('mcp server connection lost; reconnecting', { server, reason: why, ...said });
    open.retire(from);
    scheduleReconnect();
    setState('waiting');
  }

  /**
   * Lists the tools of `from` and tells them, one listing at a time and one more after it however
   * many changes were told meanwhile; a list the same as the last one told whole on `from` is not told again.
   */
  function toolRefresher(from: Client): () => Promise<void> {
    let told: string | undefined;
    return coalesced(async (superseded) => {
      const tools = await listAllTools(from, config.connectTimeoutMs);
      const digest = listDigest(tools);
      if (from !== client || digest === told) return;
      await options.onTools(tools, () => superseded() || from !== client);
      // One superseded while told may be imported in part (none of it, at connect): the same list is told again.
      told = superseded() ? undefined : digest;
    });
  }

  /**
   * Drops `from`, or ends it while it connects, for a server that passed a bound of mcp-request-guard:
   * its next attempt waits as after as many failures as it was dropped for this (ReconnectBackoff.abused).
   */
  function abused(from: Client, reason: string): void {
    backoff.abused();
    if (from === client) return dropped(from, reason);
    logger.warn('mcp server connection dropped while connecting', { server, reason });
    open.retire(from);
  }

  /**
   * One attempt of the reconnection loop. Until the client is connected a failure schedules the
   * next attempt here; after, the tools are listed and a failure drops the client (`dropped`
   * schedules it), so each failure schedules one attempt, never two.
   */
  async function connect(): Promise<void> {
    if (isClosed() || attempt !== undefined || state === 'connected') return;
    clearTimeout(timer);
    timer = undefined;
    const next = new Client(CLIENT_INFO, { capabilities: {} });
    attempt = next;
    setState('connecting');
    next.onclose = () => {
      open.closed(next);
      dropped(next, 'the server closed it; a stdio server exited or closed its output', words?.said());
    };
    next.onerror = (error) => {
      logger.debug('mcp transport error', { server, error: error.message });
      if (config.url && isStreamLoss(error)) dropped(next, error.message);
    };
    const refresh = toolRefresher(next);
    next.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (next === client) void refresh().catch((error: Error) => next === client && logger.warn('mcp tool list refresh failed', { server, error: error.message }));
    });
    const { transport: nextTransport, sentHooks, words } = newMcpTransport(config, logger, options.maxAnswerBytes);
    if (sentHooks) hooksOf.set(next, sentHooks);
    guardServer(nextTransport, { logger, server, onAbuse: (reason) => abused(next, reason) });
    forgetUnsent(next, nextTransport);
    liveness.watch(next, nextTransport);
    open.add(next, nextTransport);
    try {
      await connectQuietly(next, nextTransport, config.connectTimeoutMs);
      if (isClosed()) throw new Error('closed while connecting');
    } catch (error) {
      attempt = undefined;
      open.retire(next);
      if (isClosed()) return;
      logger.warn('mcp server connection failed; retrying', { server, target, error: (error as Error).message, ...words?.said() });
      scheduleReconnect();
      setState('waiting');
      return;
    }
    attempt = undefined;
    if (client) open.retire(client);
    client = next;
    transport = nextTransport;
    setState('connected');
    try {
      await refresh();
    } catch (error) {
      dropped(next, `listing its tools failed: ${(error as Error).message}`);
      return;
    }
    if (client !== next) return;
    backoff.up();
    logger.info('mcp server connected', { server, target });
  }

  return {
    config,
    connected: () => state === 'connected',
    start: () => connect(),
    async call(tool, args, ctx) {
      ctx.delivery?.('pending');
      let current = state === 'connected' ? client : undefined;
      if (!current) current = await reconnected(ctx);
      if (!current) throw notConnectedError(server);
      // The SDK adds an abort listener to its signal, never removed (typescript-sdk#1672): one of its own per call.
      const link = linkAbort(ctx.signal);
      let done: (() => void) | undefined;
      let sentAt: number | undefined;
      // Over HTTP the request is sent once its POST has a connected socket (SentHooks); over stdio, as it is written.
      const hooks = hooksOf.get(current);
      let reached = hooks === undefined;
      try {
        const meta = ctx.traceparent ? { ...ctx.meta, traceparent: ctx.traceparent, ...(ctx.tracestate ? { tracestate: ctx.tracestate } : {}) } : ctx.meta;
        const params = { name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) };
        // The SDK sets a timer of it: a longer one (timeout_ms past 2^31-1) would fire at once.
        const timeout = Math.min(MAX_TIMER_MS, Math.max(1_000, ctx.deadline - Date.now() + 1_000));
        if (reached) ctx.delivery?.('sent');
        sentAt = Date.now();
        done = liveness.sent(current, ctx.deadline);
        const from = current;
        const start = () => from.callTool(params, undefined, { signal: link.signal, timeout });
        const onSent = () => {
          reached = true;
          ctx.delivery?.('sent');
        };
        const result = (await (hooks ? hooks.arm(onSent, start) : start())) as McpToolResult;
        backoff.answered();
        return result;
      } catch (error) {
        // A call aborted by the client's cancel or deadline is not followed by a ping at once (a
        // busy server is not at fault); it is watched until the tool's timeout would have passed.
        if (ctx.signal.aborted) {
          if (ctx.timedOut?.() === true) liveness.probe(current);
          else if (sentAt !== undefined && ctx.timeoutMs !== undefined) liveness.abandoned(current, sentAt, ctx.timeoutMs);
          throw error;
        }
        const failure = classifyMcpError(error, server, target, current, reached);
        if (failure.broken) dropped(current, failure.error.message);
        else if (failure.error.kind === ErrorKind.TIMEOUT) liveness.probe(current);
        throw failure.error;
      } finally {
        done?.();
        link.release();
      }
    },
    diagnostics: () => ({ ...clientDiagnostics(client, transport), ...liveness.diagnostics(), openClients: open.size() }),
    async close() {
      setState('closed');
      liveness.close();
      clearTimeout(timer);
      timer = undefined;
      client = undefined;
      await open.closeAll();
    },
  };
}
