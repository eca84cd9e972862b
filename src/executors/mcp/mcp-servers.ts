import type { Logger } from '../../log';
import { RegistryError, type ToolRegistry } from '../../registry';
import type { ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { checkInteger } from '../../options/integer-option';
import { DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import type { McpServerConfig } from './mcp-config';
import { createMcpConnection, type McpConnection } from './mcp-connection';
import { MAX_DESCRIPTION_CHARS } from '../../registry/spec-bounds';
import { importTools } from './mcp-import';

/** The configured MCP servers, each with one long-lived connection, and their imported tools. */
export interface McpServers {
  get(name: string): McpConnection | undefined;
  /**
   * Connects every server (first attempts in parallel) and imports tools into `registry` (tenant "":
   * this replica's own, never shared through Redis); resolves once each first attempt has ended, the
   * tools of every server it connected registered.
   */
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

/**
 * Registers an imported tool, its schema compiled in the compiler's worker thread when large (see
 * ToolRegistry.registerAsync): a server changing its tools at runtime (tools/list_changed, a
 * reconnection) held every call in flight for seconds per 256 KiB of schema. When the worker takes
 * no more now (`limit`: its queue full of tenants' schemas), compiled on the event loop as before,
 * the operator's tool never refused for that.
 */
async function registerImported(registry: ToolRegistry, spec: ToolSpec, closed: () => boolean): Promise<void> {
  try {
    await registry.registerAsync([spec], { tenant: '', replace: true });
  } catch (error) {
    if (!(error instanceof RegistryError && error.code === 'limit') || closed()) throw error;
    registry.register([spec], { tenant: '', replace: true });
  }
}

/** Creates the servers of the config's `mcp_servers:`; nothing connects before `start`. */
export function createMcpServers(configs: readonly McpServerConfig[], logger: Logger, options: McpServersOptions = {}): McpServers {
  const maxAnswerBytes = checkInteger('maxAnswerBytes', options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
  const connections = new Map<string, McpConnection>();
  const imported = new Map<string, Set<string>>();
  let registry: ToolRegistry | undefined;
  let closed = false;
  // The end of the last import (settled either way): imports run one at a time, every server's, so
  // that a name's check and its registration are never split by another server's import.
  let imports: Promise<void> = Promise.resolve();

  const ours = (name: string, server: string) => {
    const tool = registry?.lookup('', name);
    return tool !== undefined && tool.spec.executor.case === 'mcp' && tool.spec.executor.value.server === server;
  };

  async function importInto(into: ToolRegistry, config: McpServerConfig, tools: unknown[]): Promise<void> {
    const { specs, skipped, cut } = importTools(config, tools);
    for (const s of skipped) logger.warn('mcp tool not imported', { server: config.name, tool: s.tool, reason: s.reason });
    for (const c of cut) logger.warn('mcp tool description cut', { server: config.name, tool: c.tool, chars: c.chars, maxChars: MAX_DESCRIPTION_CHARS });
    const accepted = new Set<string>();
    for (const spec of specs) {
      if (closed) return;
      if (into.lookup('', spec.name) && !ours(spec.name, config.name)) {
        logger.warn('mcp tool not imported: the name is taken by another tool', { server: config.name, tool: spec.name });
        continue;
      }
      try {
        await registerImported(into, spec, () => closed);
        accepted.add(spec.name);
      } catch (error) {
        if (closed) return;
        logger.warn('mcp tool not imported', { server: config.name, tool: spec.name, reason: (error as Error).message });
      }
    }
    for (const name of imported.get(config.name) ?? []) {
      if (!accepted.has(name) && ours(name, config.name)) into.remove('', name);
    }
    imported.set(config.name, accepted);
    logger.info('mcp tools imported', { server: config.name, tools: accepted.size });
  }

  function install(config: McpServerConfig, tools: unknown[]): Promise<void> {
    const into = registry;
    if (!into) return Promise.resolve();
    const run = imports.then(() => importInto(into, config, tools));
    imports = run.catch(() => undefined);
    return run;
  }

  for (const config of configs) connections.set(config.name, createMcpConnection(config, { logger, maxAnswerBytes, onTools: (tools) => install(config, tools) }));

  return {
    get: (name) => connections.get(name),
    async start(into) {
      registry = into;
      await Promise.all([...connections.values()].map((c) => c.start()));
    },
    async close() {
      closed = true;
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}
