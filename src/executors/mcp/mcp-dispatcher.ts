import type { Socket } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { undici } from '../undici-lazy';

/** Why a connect still under way when its dispatcher was destroyed failed (nobody waits for it then). */
const CLOSED_WHILE_CONNECTING = 'the MCP connection was closed while this socket was connecting';

/**
 * The undici Agent of one Streamable HTTP transport (its POSTs, its GET stream, its session's
 * DELETE), destroyed with the transport, so a connect that hangs (the server's host silent) ends
 * when its connection closes. Through Node's fetch's shared dispatcher such connects outlived the
 * connection, and the app, until undici's connect timeout (10 s) or their next SYN met a closed port.
 */
export interface McpDispatcher {
  readonly agent: Agent;
  /**
   * Ends every socket at once, connected or still connecting (an Agent's own destroy leaves a
   * connect under way to its timeout), and fails any request made after. Idempotent.
   */
  destroy(): Promise<void>;
}

/** A new {@link McpDispatcher}, with undici's defaults (those of Node's fetch's own dispatcher). */
export function createMcpDispatcher(): McpDispatcher {
  const { Agent, buildConnector: build } = undici();
  const connector = build({});
  /** Sockets whose connect (TCP, and TLS for https) has not yet ended. */
  const connecting = new Set<Socket>();
  let destroyed: Promise<void> | undefined;
  const connect: buildConnector.connector = (options, callback) => {
    let ended = false;
    // buildConnector's connector returns its socket (its .d.ts says void).
    const socket = connector(options, (...result) => {
      ended = true;
      connecting.delete(socket);
      callback(...result);
    }) as unknown as Socket;
    if (!ended) connecting.add(socket);
    return socket;
  };
  const agent = new Agent({ connect });
  return {
    agent,
    destroy() {
      if (destroyed !== undefined) return destroyed;
      // Destroyed first, the clients take the connect's error as theirs being destroyed and make no other.
      destroyed = agent.destroy().catch(() => undefined);
      for (const socket of connecting) socket.destroy(new Error(CLOSED_WHILE_CONNECTING));
      connecting.clear();
      return destroyed;
    },
  };
}
