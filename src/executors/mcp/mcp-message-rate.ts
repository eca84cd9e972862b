import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Most requests and notifications an MCP server may send dispatch a second, over a connection's
 * life (ping, roots/list, sampling, elicitation, logs, progress, list changes, unknown methods).
 * Each costs dispatch ~27 us of CPU (read, parsed, checked against the schema, answered), so a
 * server sending them in a tight loop while reading the answers (no bound of mcp-request-guard
 * passed) took a core for as long as it went on. A normal server sends a few a second: pings,
 * progress and log messages of its calls, list changes; one reporting progress per item of a long
 * job may send hundreds. At the bound a server costs dispatch ~3-4% of a core.
 */
export const MAX_SERVER_MESSAGES_PER_SECOND = 1_000;
/** Most of them at once, over MAX_SERVER_MESSAGES_PER_SECOND (a server asking many pings in one write). */
export const MAX_SERVER_MESSAGE_BURST = 2_000;

/** The rate of a server's messages (createMessageRate). */
export interface MessageRateOptions {
  /** @default MAX_SERVER_MESSAGES_PER_SECOND */
  readonly perSecond?: number;
  /** @default MAX_SERVER_MESSAGE_BURST */
  readonly burst?: number;
  /** The clock, in ms. @default performance.now */
  readonly now?: () => number;
}

/** A token bucket of a server's messages: `admit` takes one, false when none is left. */
export interface MessageRate {
  readonly perSecond: number;
  readonly burst: number;
  admit(): boolean;
}

/** A bucket holding `burst` tokens, full at first, refilled at `perSecond`. */
export function createMessageRate(options: MessageRateOptions = {}): MessageRate {
  const perSecond = options.perSecond ?? MAX_SERVER_MESSAGES_PER_SECOND;
  const burst = options.burst ?? MAX_SERVER_MESSAGE_BURST;
  const now = options.now ?? (() => performance.now());
  let tokens = burst;
  let at = now();
  return {
    perSecond,
    burst,
    admit() {
      const t = now();
      tokens = Math.min(burst, tokens + ((t - at) * perSecond) / 1_000);
      at = t;
      if (tokens < 1) return false;
      tokens--;
      return true;
    },
  };
}

/** Whether `message` is the server's own (a request or a notification), not an answer to dispatch's requests. */
export const isServerMessage = (message: JSONRPCMessage): boolean => 'method' in message;
