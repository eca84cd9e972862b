import type { Logger } from '../../log';
import type { ToolRegistry } from '../../registry';
import { checkInteger } from '../../options/integer-option';
import { DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import type { McpServerConfig } from './mcp-config';
import { createMcpConnection, type McpConnection } from './mcp-connection';
import { importTools } from './mcp-import';

/** The configured MCP servers, each with one long-lived connection, and their imported tools. */
export interface McpServers {
  get(name: string): McpConnection | undefined;
  /** Connects every server (first attempts in parallel) and imports tools into `registry` (tenant "": this replica's own, never shared through Redis). */
  start(registry: ToolRegistry): Promise<void>;
  close(): Promise<void>;
}

/** Options of the servers beyond each one's config. */
export interface McpServersOptions {
  /**
   * Largest answer read from a Streamable HTTP server, in bytes (RequestScopedFetchOptions.maxAnswerBytes);
   * the app passes limits.max_tool_output_chars x 4, as for HTTP tools. @default DEFAULT_MAX_ANSWER_BYTES (64 MiB)
   */
  readonly maxAnswerBytes?: number;
}

/** Creates the servers of the config's `mcp_servers:`; nothing connects before `start`. */
export function createMcpServers(configs: readonly McpServerConfig[], logger: Logger, options: McpServersOptions = {}): McpServers {
  const maxAnswerBytes = checkInteger('maxAnswerBytes', options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
  const connections = new Map<string, McpConnection>();
  const imported = new Map<string, Set<string>>();
  let registry: ToolRegistry | undefined;

  const ours = (name: string, server: string) => {
    const tool = registry?.lookup('', name);
    return tool !== undefined && tool.spec.executor.case === 'mcp' && tool.spec.executor.value.server === server;
  };

  function install(config: McpServerConfig, tools: unknown[]): void {
    if (!registry) return;
    const { specs, skipped } = importTools(config, tools);
    for (const s of skipped) logger.warn('mcp tool not imported', { server: config.name, tool: s.tool, reason: s.reason });
    const accepted = new Set<string>();
    for (const spec of specs) {
      if (registry.lookup('', spec.name) && !ours(spec.name, config.name)) {
        logger.warn('mcp tool not imported: the name is taken by another tool', { server: config.name, tool: spec.name });
        continue;
      }
      try {
        registry.register([spec], { tenant: '', replace: true });
        accepted.add(spec.name);
      } catch (error) {
        logger.warn('mcp tool not imported', { server: config.name, tool: spec.name, reason: (error as Error).message });
      }
    }
    for (const name of imported.get(config.name) ?? []) {
      if (!accepted.has(name) && ours(name, config.name)) registry.remove('', name);
    }
    imported.set(config.name, accepted);
    logger.info('mcp tools imported', { server: config.name, tools: accepted.size });
  }

  for (const config of configs) connections.set(config.name, createMcpConnection(config, { logger, maxAnswerBytes, onTools: (tools) => install(config, tools) }));

  return {
    get: (name) => connections.get(name),
    async start(into) {
      registry = into;
      await Promise.all([...connections.values()].map((c) => c.start()));
    },
    async close() {
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}
