import { TimedOutError } from '../../pipeline';
import type { Executor } from '../executor';
import { mcpToolError } from './mcp-errors';
import { resultText } from './mcp-result';
import type { McpServers } from './mcp-servers';
import { notConfiguredError } from './mcp-unconfigured';

/** The `_meta` key of a call's idempotency key (the same value as an HTTP tool's `Idempotency-Key`). */
export const META_IDEMPOTENCY_KEY = 'dispatch/idempotency_key';
/** The `_meta` key of the call's attempt number (1, then 2 on its first retry...). */
export const META_ATTEMPT = 'dispatch/attempt';
/** The `_meta` key of the calling tenant (`default` without auth): whose session the call's is. */
export const META_TENANT = 'dispatch/tenant';

/**
 * Whether an attempt's abort `reason` is its tool's own timeout: the pipeline's runGuarded aborts
 * with a TimedOutError of the time the attempt was given, the tool's timeout_ms unless the
 * client's deadline came first (then less: the client's doing, as the pipeline classifies it). A
 * cancel carries the client's reason.
 */
function isOwnTimeout(reason: unknown, toolTimeoutMs: number): boolean {
  return reason instanceof TimedOutError && reason.timeoutMs >= toolTimeoutMs;
}

/**
 * Runs `mcp { server, tool }` tools over the server's one connection. An `isError` result is a
 * TOOL_ERROR after execution; transport failures are classified by phase (see mcp-errors).
 */
export function createMcpExecutor(servers: McpServers): Executor {
  return {
    unlisted: () => servers.unlisted(),
    async execute(tool, args, ctx) {
      if (tool.spec.executor.case !== 'mcp') throw new Error('not an mcp tool');
      const { server, tool: remote } = tool.spec.executor.value;
      const connection = servers.get(server);
      if (!connection) throw notConfiguredError(server);
      const input = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const signal = ctx.signal;
      const timedOut = () => isOwnTimeout(signal.reason, tool.timeoutMs);
      // What HTTP tools and workers get to tell a retry from a new call, in the MCP way (namespaced `_meta` keys).
      const meta = { [META_IDEMPOTENCY_KEY]: ctx.idempotencyKey, [META_ATTEMPT]: ctx.attempt, [META_TENANT]: ctx.tenant };
      const result = await connection.call(remote, input, { signal, deadline: ctx.deadline, traceparent: ctx.traceparent, tracestate: ctx.tracestate, meta, delivery: (state) => ctx.delivery?.(state), timedOut, timeoutMs: tool.timeoutMs });
      const text = resultText(result);
      if (result.isError === true) throw mcpToolError(server, remote, text);
      return text;
    },
  };
}
