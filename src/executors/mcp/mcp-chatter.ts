import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from '../../log';
import { guardRequests } from './mcp-request-guard';

// What a chatty MCP server sends dispatch beyond the answers to its calls: its own requests and
// notifications, bounded by mcp-request-guard (mcp-message-rate for their rates), and its log
// messages, asked down to warnings.

/**
 * The least severe log message asked of a server that advertises `logging`. Dispatch does not use
 * a server's log messages (it has no handler for them), and past their rate notifications are shed
 * (mcp-message-rate): asking for warnings and worse only spares both sides the work of the info
 * and debug messages a chatty server sends by default.
 */
export const SERVER_LOG_LEVEL = 'warning';

/** Hooks of guardServer. */
export interface GuardServerOptions {
  readonly logger: Logger;
  /** The server's name, logged with the notifications shed. */
  readonly server: string;
  /** Told once, when a bound is passed: the connection is to be dropped (RequestGuardOptions.onAbuse). */
  readonly onAbuse: (reason: string) => void;
}

/**
 * Bounds what `transport`'s server may make dispatch do (guardRequests), logging how many
 * notifications were shed over their rate, once a second (SHED_REPORT_MS) while they are: the
 * connection stays.
 */
export function guardServer(transport: Transport, options: GuardServerOptions): void {
  const { logger, server } = options;
  guardRequests(transport, { onAbuse: options.onAbuse, onShed: (shed) => logger.info('mcp server notifications shed over their rate', { server, shed }) });
}

/**
 * Connects `client` over `transport`, then, if its server advertises the `logging` capability,
 * asks it once for SERVER_LOG_LEVEL. Best effort: the request is not waited for, and its failure
 * (a server that refuses it, or does not answer within `timeoutMs`) is ignored.
 */
export async function connectQuietly(client: Client, transport: Transport, timeoutMs: number): Promise<void> {
  await client.connect(transport, { timeout: timeoutMs });
  if (client.getServerCapabilities()?.logging === undefined) return;
  void client.setLoggingLevel(SERVER_LOG_LEVEL, { timeout: timeoutMs }).catch(() => undefined);
}
