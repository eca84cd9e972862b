import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Logger } from '../../log';
import type { McpServerConfig } from './mcp-config';
import { createMcpDispatcher } from './mcp-dispatcher';
import { createRequestScopedFetch } from './mcp-fetch';
import type { McpTransport } from './mcp-open-clients';
import { SentHooks } from './mcp-sent-hooks';
import { lastWords, type LastWords } from './mcp-last-words';
import { readStderr, useLineBuffer } from './mcp-stdio-buffer';

/**
 * Largest message read from a stdio MCP server, in bytes, as large as an HTTP tool's answer may
 * be. The SDK's default (10 MiB) is below what a tool may return (limits.max_tool_output_chars,
 * 16 Mi characters), and a larger message closes the whole connection: the server is stopped and
 * every call running on it fails. Read by a LineBuffer (useLineBuffer): the SDK's own buffer costs
 * time quadratic in a message's size.
 */
const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * A new transport to `config`'s server, and for a Streamable HTTP one the hooks telling its calls'
 * delivery (see SentHooks). A Streamable HTTP transport makes its requests through its own undici
 * Agent, destroyed as the transport closes (a client retired, the connection or the app closed):
 * its connects still under way end then, not up to 10 s later (see McpDispatcher).
 */
export function newMcpTransport(config: McpServerConfig, logger: Logger, maxAnswerBytes: number | undefined): { transport: McpTransport; sentHooks?: SentHooks; words?: LastWords } {
  const server = config.name;
  if (config.url) {
    const sentHooks = new SentHooks();
    const dispatcher = createMcpDispatcher();
    const fetch = createRequestScopedFetch(globalThis.fetch, { maxAnswerBytes, server, sentHooks, dispatcher: dispatcher.agent });
    const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } }, fetch });
    sentHooks.wrap(transport);
    const close = transport.close.bind(transport);
    // The transport's close aborts its requests (synchronously) before the Agent ends their sockets.
    transport.close = () => Promise.all([close(), dispatcher.destroy()]).then(() => undefined);
    return { transport, sentHooks };
  }
  const [command, ...args] = config.command!;
  const stdio = new StdioClientTransport({ command: command!, args, env: { ...getDefaultEnvironment(), ...config.env }, cwd: config.cwd, stderr: 'pipe', maxBufferSize: MAX_STDIO_MESSAGE_BYTES });
  useLineBuffer(stdio, MAX_STDIO_MESSAGE_BYTES);
  const words = lastWords();
  // The SDK spawns the process in start() and forgets it when it closes: its exit is heard here.
  const start = stdio.start.bind(stdio);
  stdio.start = () => {
    const started = start();
    (stdio as unknown as { readonly _process?: NodeJS.EventEmitter })._process?.once('exit', (code: number | null, signal: string | null) => words.exited(code, signal));
    return started;
  };
  readStderr(stdio.stderr, (chunk) => {
    words.heard(chunk);
    logger.debug('mcp server stderr', { server, text: chunk.toString().slice(0, 1_000) });
  });
  return { transport: stdio, words };
}
