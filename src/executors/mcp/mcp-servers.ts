import type { Logger } from '../../log';
import type { UnlistedSource } from '../executor';
import type { ToolRegistry } from '../../registry';
import { checkInteger } from '../../options/integer-option';
import { DEFAULT_MAX_ANSWER_BYTES } from './mcp-answer-bound';
import type { McpServerConfig } from './mcp-config';
import { createMcpConnection, type McpConnection } from './mcp-connection';
import { MAX_DESCRIPTION_CHARS } from '../../registry/spec-bounds';
import { keywordTypoIn } from '../../registry/keyword-typos';
import { importTools } from './mcp-import';
import { registerImported } from './mcp-register';

/** The configured MCP servers, each with one long-lived connection, and their imported tools. */
export interface McpServers {
  get(name: string): McpConnection | undefined;
  /** The servers whose tools were never listed (not connected since the start), in config order. */
  unlisted(): UnlistedSource[];
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

/** Creates the servers of the config's `mcp_servers:`; nothing connects before `start`. */
export function createMcpServers(configs: readonly McpServerConfig[], logger: Logger, options: McpServersOptions = {}): McpServers {
  const maxAnswerBytes = checkInteger('maxAnswerBytes', options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES);
  const connections = new Map<string, McpConnection>();
  const imported = new Map<string, Set<string>>();
  // The servers whose tools were listed once (their import started): the others' are not known.
  const listed = new Set<string>();
  let registry: ToolRegistry | undefined;
  let closed = false;
  // The end of the last import (settled either way): imports run one at a time, every server's, so
  // that a name's check and its registration are never split by another server's import.
  let imports: Promise<void> = Promise.resolve();

  /**
   * Whether `name` is a tool this server's import registered (and still there as the server's).
   * Not any tool on the server: a config file's tool pinned to one of its tools (`mcp: { server,
   * tool }`, its own effect and schema) under the name the import gives it was replaced by the
   * import, silently, and removed with it when the server stopped listing the tool.
   */
  const ours = (name: string, server: string) => {
    if (!imported.get(server)?.has(name)) return false;
    const tool = registry?.lookup('', name);
    return tool !== undefined && tool.spec.executor.case === 'mcp' && tool.spec.executor.value.server === server;
  };

  /**
   * Imports a server's listed tools, one after the other. A list `superseded` (a newer one is to
   * come) stops being imported: the tools it registered are kept as the server's, for the newer
   * list's import to replace or remove.
   */
  async function importInto(into: ToolRegistry, config: McpServerConfig, tools: unknown[], superseded: () => boolean): Promise<void> {
    const { specs, skipped, cut, unlisted } = importTools(config, tools);
    listed.add(config.name);
    for (const u of unlisted) logger.warn("mcp server's read_only names a tool the server does not list", { server: config.name, tool: u.tool, ...(u.didYouMean && { didYouMean: u.didYouMean }) });
    for (const s of skipped) logger.warn('mcp tool not imported', { server: config.name, tool: s.tool, reason: s.reason });
    for (const c of cut) logger.warn('mcp tool description cut', { server: config.name, tool: c.tool, chars: c.chars, maxChars: MAX_DESCRIPTION_CHARS });
    const accepted = new Set<string>();
    const stop = () => {
      imported.set(config.name, new Set([...(imported.get(config.name) ?? []), ...accepted]));
      logger.debug('mcp tool import superseded by a newer list', { server: config.name, tools: accepted.size });
    };
    for (const spec of specs) {
      if (closed) return;
      if (superseded()) return stop();
      if (into.lookup('', spec.name) && !ours(spec.name, config.name)) {
        logger.warn('mcp tool not imported: the name is taken by another tool', { server: config.name, tool: spec.name });
        continue;
      }
      try {
        if (!(await registerImported(into, spec, { closed: () => closed, superseded }))) return stop();
        accepted.add(spec.name);
        // Imported as its server wrote it (validate-spec.ts, fromMcp); the operator hears of it.
        const typo = keywordTypoIn(spec.inputSchema);
        if (typo !== undefined) logger.warn('mcp tool imported with a schema mistake, whose check is off', { server: config.name, tool: spec.name, problem: typo });
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

  function install(config: McpServerConfig, tools: unknown[], superseded: () => boolean): Promise<void> {
    const into = registry;
    if (!into) return Promise.resolve();
    const run = imports.then(() => importInto(into, config, tools, superseded));
    imports = run.catch(() => undefined);
    return run;
  }

  for (const config of configs) connections.set(config.name, createMcpConnection(config, { logger, maxAnswerBytes, onTools: (tools, superseded) => install(config, tools, superseded) }));

  return {
    get: (name) => connections.get(name),
    unlisted: () => configs.flatMap((config) => (listed.has(config.name) ? [] : [{ source: `MCP server "${config.name}"`, prefix: config.prefix }])),
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
