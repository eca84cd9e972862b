import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getEventListeners, type EventEmitter } from 'node:events';
import { openLinks } from './mcp-abort-link';

interface ClientInternals {
  readonly _responseHandlers?: Map<unknown, unknown>;
  readonly _progressHandlers?: Map<unknown, unknown>;
  readonly _timeoutInfo?: Map<unknown, unknown>;
}

interface TransportInternals {
  readonly _process?: EventEmitter & { stdin?: EventEmitter | null; stdout?: EventEmitter | null; stderr?: EventEmitter | null };
  /** A Streamable HTTP transport's controller, whose signal goes with each of its requests. */
  readonly _abortController?: AbortController;
}

const listeners = (emitter: EventEmitter | null | undefined): number =>
  emitter ? emitter.eventNames().reduce((sum, name) => sum + emitter.listenerCount(name), 0) : 0;

/**
 * What an MCP client holds: its pending requests and timers, the listeners on a stdio server's
 * process and pipes, and the abort listeners on a Streamable HTTP transport's signal and the
 * requests linked to it (see mcp-fetch). Reads SDK internals defensively (absent fields count 0);
 * for checking that nothing grows per request.
 */
export function clientDiagnostics(client: Client | undefined, transport: unknown): Record<string, number> {
  const c = (client ?? {}) as unknown as ClientInternals;
  const t = transport as TransportInternals | undefined;
  const p = t?._process;
  const signal = t?._abortController?.signal;
  return {
    pendingResponses: c._responseHandlers?.size ?? 0,
    progressHandlers: c._progressHandlers?.size ?? 0,
    timeouts: c._timeoutInfo?.size ?? 0,
    processListeners: listeners(p),
    stdinListeners: listeners(p?.stdin),
    stdoutListeners: listeners(p?.stdout),
    stderrListeners: listeners(p?.stderr),
    transportAbortListeners: signal ? getEventListeners(signal, 'abort').length : 0,
    transportOpenRequests: signal ? openLinks(signal) : 0,
  };
}
