import { create } from '@bufbuild/protobuf';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { Effect, McpExecutorSchema, ToolSpecSchema, type ToolSpec } from '../../../gen/dispatch/v1/tool_pb';
import { closestMatch } from '../../json';
import { codePointLength, sliceCodePoints } from '../../pipeline/bound-result';
import { declaredDraft } from '../../registry/schema-drafts';
import { MAX_DESCRIPTION_CHARS } from '../../registry/spec-bounds';
import type { McpServerConfig } from './mcp-config';

/** A tool as an MCP server lists it. */
export interface McpToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean; readonly idempotentHint?: boolean };
}

/** The specs of a server's tools, and the tools that could not be imported and why. */
export interface ImportedTools {
  readonly specs: ToolSpec[];
  readonly skipped: { readonly tool: string; readonly reason: string }[];
  /** Tools imported with their description cut to MAX_DESCRIPTION_CHARS, with its length as listed. */
  readonly cut: { readonly tool: string; readonly chars: number }[];
  /** Names of the server's `read_only:` list it does not list, each with the listed name it may mean. */
  readonly unlisted: { readonly tool: string; readonly didYouMean?: string }[];
}

const CUT_MARKER = ' [description cut]';

const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Whether a tool only reads. The operator's word (`readOnly`, the server's `read_only:` list) wins.
 * Annotations are hints the server chooses, so they count only for a trusted server; an untrusted
 * server's tools are side-effecting, as the MCP defaults say. A tool claiming both read-only and
 * destructive is side-effecting. idempotentHint and destructiveHint alone never make a tool
 * read-only: a repeated or harmless write is still a write.
 */
export function effectOf(tool: McpToolInfo, trusted: boolean, readOnly: ReadonlySet<string> = new Set()): Effect {
  if (readOnly.has(tool.name)) return Effect.READ_ONLY;
  const hints = tool.annotations ?? {};
  return trusted && hints.readOnlyHint === true && hints.destructiveHint !== true ? Effect.READ_ONLY : Effect.SIDE_EFFECT;
}

/**
 * The input schema as registered: a `$schema` naming a draft the compiler knows is kept (it upgrades
 * draft-04 to 2019-09 to 2020-12, see schema-drafts.ts), another is dropped, the schema then read as
 * 2020-12.
 */
export function inputSchemaText(schema: Record<string, unknown>): string {
  const { $schema, ...rest } = schema;
  return JSON.stringify(declaredDraft($schema) !== undefined ? schema : rest);
}

/** Longest reason given for a tool that is not a valid MCP tool. */
const MAX_REASON_CHARS = 200;

/** A listed tool's name, for logging it (whatever the server sent). */
function listedName(tool: unknown): string {
  const name = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
  return (typeof name === 'string' ? name : JSON.stringify(name) ?? 'undefined').slice(0, 128);
}

/**
 * The tool as the MCP schema (the SDK's ToolSchema) has it, or why it is not one: its first
 * problem, on one line (e.g. `inputSchema.type: Invalid input: expected "object"`).
 */
export function checkTool(tool: unknown): { tool: McpToolInfo } | { reason: string } {
  const parsed = ToolSchema.safeParse(tool);
  if (parsed.success) return { tool: parsed.data as McpToolInfo };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  const reason = `not a valid MCP tool: ${where}${issue?.message ?? 'invalid'}`.replace(/\s+/g, ' ');
  return { reason: reason.slice(0, MAX_REASON_CHARS) };
}

/**
 * ToolSpecs for a server's tools under its prefix, with the `mcp` executor. `tools` are as listed:
 * one that is not a valid MCP tool is skipped, with its first problem, and the others imported.
 */
export function importTools(server: McpServerConfig, tools: readonly unknown[]): ImportedTools {
  const specs: ToolSpec[] = [];
  const skipped: ImportedTools['skipped'] = [];
  const cut: ImportedTools['cut'] = [];
  for (const listed of tools) {
    const checked = checkTool(listed);
    if ('reason' in checked) {
      skipped.push({ tool: listedName(listed), reason: checked.reason });
      continue;
    }
    const { tool } = checked;
    const name = `${server.prefix}${tool.name}`;
    if (!NAME.test(name)) {
      skipped.push({ tool: tool.name, reason: `"${name}" is not a valid dispatch tool name (1-128 letters, digits, '_', '.', ':' or '-')` });
      continue;
    }
    const effect = effectOf(tool, server.trusted, server.readOnly);
    let description = tool.description ?? '';
    const chars = codePointLength(description);
    if (chars > MAX_DESCRIPTION_CHARS) {
      description = sliceCodePoints(description, 0, MAX_DESCRIPTION_CHARS - CUT_MARKER.length) + CUT_MARKER;
      cut.push({ tool: tool.name, chars });
    }
    specs.push(
      create(ToolSpecSchema, {
        name,
        description,
        inputSchema: inputSchemaText(tool.inputSchema ?? { type: 'object' }),
        effect,
        concurrencySafe: effect === Effect.READ_ONLY,
        timeoutMs: server.timeoutMs,
        executor: { case: 'mcp', value: create(McpExecutorSchema, { server: server.name, tool: tool.name }) },
      }),
    );
  }
  const names = new Set([...specs.map((spec) => (spec.executor.value as { tool: string }).tool), ...skipped.map((s) => s.tool)]);
  const unlisted = [...server.readOnly].filter((name) => !names.has(name)).map((tool) => ({ tool, didYouMean: closestMatch(tool, names) }));
  return { specs, skipped, cut, unlisted };
}
