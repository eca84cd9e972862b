import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

interface ProtocolInternals {
  readonly _responseHandlers?: Map<number, unknown>;
  readonly _progressHandlers?: Map<number, unknown>;
}

/**
 * Forgets each request of `client` that `transport` fails to send: its response and progress
 * handlers are removed from the client (private maps of the SDK's Protocol, keyed by `Number(id)`;
 * read defensively). The SDK's Protocol.request (@modelcontextprotocol/sdk 1.x) removes only the
 * request's timeout when `send` rejects, and the connection stays for most such failures (a
 * Streamable HTTP server answering a POST 429, 413, 401): each refused call kept its handler for
 * as long as the connection lived, so a server rate-limiting a busy replica grew its heap without
 * end. Wraps `send`; call after the other wrappers of `send` or before, either way.
 */
export function forgetUnsent(client: Client, transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const sent = send(message, options);
    if ('method' in message && 'id' in message) {
      sent.catch(() => {
        const internals = client as unknown as ProtocolInternals;
        internals._responseHandlers?.delete(Number(message.id));
        internals._progressHandlers?.delete(Number(message.id));
      });
    }
    return sent;
  };
}
