import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** A transport of an MCP client: a stdio server's process, or a Streamable HTTP session. */
export type McpTransport = StdioClientTransport | StreamableHTTPClientTransport;

/**
 * Every client a connection has opened and not yet seen closed: the one connected, one being
 * connected, and those being closed after a drop. A stdio client is closed once its server
 * process has exited, so none is left running when the connection closes.
 */
export interface OpenClients {
  /** Tracks `client` from before it connects until `closed(client)`. */
  add(client: Client, transport: McpTransport): void;
  /** To be called from the client's `onclose`: its transport is closed (its process exited). */
  closed(client: Client): void;
  /**
   * Closes `client` in the background, once: a Streamable HTTP session is ended first (a DELETE,
   * at most `TERMINATE_WAIT_MS`), else the server keeps it until its own expiry; a stdio
   * server's stdin is closed, then it is sent SIGTERM and SIGKILL (the SDK's sequence).
   */
  retire(client: Client): void;
  /** Retires every open client and waits until all are closed, killing stragglers (bounded). */
  closeAll(): Promise<void>;
  size(): number;
}

/** Longest wait for a Streamable HTTP server to end a dropped client's session. */
const TERMINATE_WAIT_MS = 1_000;
/**
 * Longest wait in `closeAll` for the clients to close. The SDK closes a stdio server's stdin,
 * sends SIGTERM after 2 s and SIGKILL after 2 s more; a process still running past this bound is
 * sent SIGKILL by pid.
 */
const CLOSE_WAIT_MS = 5_000;
/** Longest wait for the processes sent SIGKILL at the end of `closeAll` to exit. */
const KILL_WAIT_MS = 1_000;

interface Entry {
  readonly transport: McpTransport;
  readonly gone: Promise<void>;
  readonly markGone: () => void;
  retiring: boolean;
  /** The stdio server's pid, read when retired (the SDK forgets it when closing). */
  pid?: number;
}

/** Hooks of a connection's open clients. */
export interface OpenClientsOptions {
  /** Told once per client, when it is retired or seen closed (whichever comes first). */
  readonly onRetire?: (client: Client) => void;
}

/** Creates the (empty) set of a connection's open clients. */
export function createOpenClients(options: OpenClientsOptions = {}): OpenClients {
  const open = new Map<Client, Entry>();

  function retire(client: Client): void {
    const entry = open.get(client);
    if (!entry || entry.retiring) return;
    entry.retiring = true;
    options.onRetire?.(client);
    const { transport } = entry;
    if (transport instanceof StdioClientTransport) entry.pid = transport.pid ?? undefined;
    void (async () => {
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        await within(transport.terminateSession().catch(() => undefined), TERMINATE_WAIT_MS);
      }
      await client.close().catch(() => undefined);
    })();
  }

  return {
    add(client, transport) {
      let markGone!: () => void;
      const gone = new Promise<void>((resolve) => (markGone = resolve));
      open.set(client, { transport, gone, markGone, retiring: false });
    },
    closed(client) {
      const entry = open.get(client);
      if (entry && !entry.retiring) options.onRetire?.(client);
      entry?.markGone();
      open.delete(client);
    },
    retire,
    async closeAll() {
      const entries = [...open];
      for (const [client] of entries) retire(client);
      const allGone = Promise.all(entries.map(([, entry]) => entry.gone));
      if (await within(allGone, CLOSE_WAIT_MS)) return;
      for (const [client, entry] of entries) {
        if (open.has(client) && entry.pid !== undefined) kill(entry.pid);
      }
      await within(allGone, KILL_WAIT_MS);
    },
    size: () => open.size,
  };
}

/** Whether `promise` settled within `ms` (a timer that does not hold the process open). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Exited meanwhile.
  }
}
