import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { EventEmitter } from 'node:events';

interface ClientInternals {
  readonly _responseHandlers?: Map<unknown, unknown>;
  readonly _progressHandlers?: Map<unknown, unknown>;
  readonly _timeoutInfo?: Map<unknown, unknown>;
}

interface StdioInternals {
  readonly _process?: EventEmitter & { stdin?: EventEmitter | null; stdout?: EventEmitter | null; stderr?: EventEmitter | null };
}

const listeners = (emitter: EventEmitter | null | undefined): number =>
  emitter ? emitter.eventNames().reduce((sum, name) => sum + emitter.listenerCount(name), 0) : 0;

/**
 * What an MCP client holds: its pending requests and timers, and the listeners on a stdio
 * server's process and pipes. Reads SDK internals defensively (absent fields count 0); for
 * checking that nothing grows per request.
 */
export function clientDiagnostics(client: Client | undefined, transport: unknown): Record<string, number> {
  const c = (client ?? {}) as unknown as ClientInternals;
  const p = (transport as StdioInternals | undefined)?._process;
  return {
    pendingResponses: c._responseHandlers?.size ?? 0,
    progressHandlers: c._progressHandlers?.size ?? 0,
    timeouts: c._timeoutInfo?.size ?? 0,
    processListeners: listeners(p),
    stdinListeners: listeners(p?.stdin),
    stdoutListeners: listeners(p?.stdout),
    stderrListeners: listeners(p?.stderr),
  };
}
