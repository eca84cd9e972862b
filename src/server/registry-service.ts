import { create, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import {
  ListToolsResponseSchema,
  RegisterToolsResponseSchema,
  RemoveToolResponseSchema,
  type ListToolsRequest,
  type ListToolsResponse,
  type RegisterToolsRequest,
  type RegisterToolsResponse,
  type RemoveToolRequest,
  type RemoveToolResponse,
} from '../../gen/dispatch/v1/registry_pb';
import { ToolSpecSchema, type ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../log';
import { answerWithin, codePointLength } from '../pipeline';
import { RegistryError, type ResolvedTool, type ToolRegistry } from '../registry';
import { listedUrl, REDACTED } from './listed-url';
import { namePage, type PageEntry } from './name-pages';
import { RpcError, unary } from './grpc-adapter';
import type { Authenticator } from './principal';

/**
 * A tool as ListTools shows it to `tenant`: an HTTP tool's header values are redacted, and its URL
 * as {@link listedUrl} says. The operator's tools (the config file's) are listed to every tenant,
 * and their headers and URLs are where their credentials live (`authorization: Bearer ...`,
 * `?key=...`).
 */
function listed(tool: ResolvedTool, tenant: string): ToolSpec {
  const spec = tool.spec;
  if (spec.executor.case !== 'http') return spec;
  const http = spec.executor.value;
  const names = Object.keys(http.headers);
  const url = listedUrl(http.url, tool.tenant === tenant);
  if (names.length === 0 && url === http.url) return spec;
  const headers = Object.fromEntries(names.map((name) => [name, REDACTED]));
  return { ...spec, executor: { case: 'http', value: { ...http, url, headers } } };
}

const sized = (spec: ToolSpec): PageEntry<ToolSpec> => ({ value: spec, bytes: toBinary(ToolSpecSchema, spec).length });

/** The first `maxBytes` bytes of `text`'s UTF-8, a code point cut in two left out. */
function utf8Head(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

/**
 * A listed tool that alone would not fit in `room` bytes (only when limits.max_response_bytes is
 * set below ~500 KB, a spec's largest with the default max_schema_bytes, spec-bounds.ts): its
 * description's head with a marker, or, when it would not fit even without a description, a note
 * naming it; the tool stays callable either way.
 */
function listedWithin(spec: ToolSpec, room: number, maxResponseBytes: number): PageEntry<ToolSpec> | { note: string } {
  const bare = toBinary(ToolSpecSchema, { ...spec, description: '' }).length;
  const total = codePointLength(spec.description);
  const marker = (kept: number) => ` [description cut to ${kept} of ${total} characters so that the listing fits in max_response_bytes]`;
  // The description's tag and length (at most 4 bytes: it is at most 128 KiB) and the marker's longest.
  const left = room - bare - 4 - Buffer.byteLength(marker(total));
  if (left < 0) return { note: `tool "${spec.name}" is left out of this listing: its spec takes ${bare} bytes without its description, more than an answer of max_response_bytes (${maxResponseBytes}) has room for; it can still be called` };
  const head = utf8Head(spec.description, left);
  return sized({ ...spec, description: head + marker(codePointLength(head)) });
}

/** The status answering a registration the registry refused (RegisterTools, a worker's hello). */
export const REGISTRY_ERROR_STATUS: Readonly<Record<RegistryError['code'], grpc.status>> = {
  invalid: grpc.status.INVALID_ARGUMENT,
  exists: grpc.status.ALREADY_EXISTS,
  limit: grpc.status.RESOURCE_EXHAUSTED,
  denied: grpc.status.PERMISSION_DENIED,
};

/** The ErrorInfo reason of a registry refusal, by its code. */
const REGISTRY_ERROR_REASON: Readonly<Record<RegistryError['code'], string>> = {
  invalid: 'INVALID_ARGUMENT',
  exists: 'ALREADY_EXISTS',
  limit: 'REGISTRY_LIMIT',
  denied: 'PERMISSION_DENIED',
};

/**
 * The RpcError of a registry refusal, its ErrorInfo naming the spec (`field`, `tools[2]` after
 * `prefix`) that the message begins with. A transient limit (one with a wait: the compiler busy,
 * the compile budget spent) is REGISTRY_BUSY with a RetryInfo of that wait, so that a client
 * tells it from a lasting REGISTRY_LIMIT, which no retry mends.
 */
export function registryRpcError(error: RegistryError, prefix = ''): RpcError {
  const spec = /^tools\[\d+\]/.exec(error.message)?.[0];
  const busy = error.code === 'limit' && error.retryAfterMs !== undefined;
  return new RpcError(REGISTRY_ERROR_STATUS[error.code], error.message, busy ? 'REGISTRY_BUSY' : REGISTRY_ERROR_REASON[error.code], { field: spec === undefined ? undefined : prefix + spec }, error.retryAfterMs);
}

/**
 * RemoveTool's answer: whether the tool was registered, once its removal is shared (written to
 * Redis and announced, see ToolRegistry.removeShared). UNAVAILABLE when that failed (the tool is
 * then still registered here) or took longer than `timeoutMs`; either way asking again is safe, which
 * the message says as `again` does (EraseTenant's removals name that RPC).
 */
export async function removeShared(registry: ToolRegistry, tenant: string, name: string, timeoutMs: number, again = 'call RemoveTool again'): Promise<boolean> {
  let removed: boolean | undefined;
  try {
    removed = await answerWithin(registry.removeShared(tenant, name), timeoutMs);
  } catch (error) {
    throw new RpcError(grpc.status.UNAVAILABLE, `tool "${name}" was not removed: its removal could not be written to Redis (${(error as Error).message}); it is still registered, ${again}`, 'STORE_UNAVAILABLE', { tool: name });
  }
  if (removed !== undefined) return removed;
  throw new RpcError(grpc.status.UNAVAILABLE, `tool "${name}" was not removed within ${timeoutMs} ms (limits.store_timeout_ms): Redis has not confirmed its removal, which may still take effect; ${again}`, 'STORE_UNAVAILABLE', { tool: name });
}

/**
 * RegisterTools, ListTools and RemoveTool over a registry; tools belong to the caller's tenant,
 * which may own at most `maxToolsPerTenant` of them. ListTools answers a page (namePage) of at
 * most `maxResponseBytes`. RemoveTool waits up to `storeTimeoutMs` for its removal to be shared.
 */
export function registryHandlers(registry: ToolRegistry, authenticate: Authenticator, logger: Logger, limits: { readonly maxToolsPerTenant: number; readonly storeTimeoutMs: number; readonly maxResponseBytes: number }) {
  const { maxToolsPerTenant, storeTimeoutMs, maxResponseBytes } = limits;
  return {
    registerTools: unary(logger, async (request: RegisterToolsRequest, call: grpc.ServerUnaryCall<RegisterToolsRequest, RegisterToolsResponse>) => {
      const { tenant } = authenticate(call, 'admin');
      try {
        const tools = await registry.registerAsync(request.tools, { tenant, replace: request.replace, maxTools: maxToolsPerTenant });
        return create(RegisterToolsResponseSchema, { registered: tools.length });
      } catch (error) {
        if (!(error instanceof RegistryError)) throw error;
        throw registryRpcError(error);
      }
    }),
    listTools: unary(logger, async (request: ListToolsRequest, call: grpc.ServerUnaryCall<ListToolsRequest, ListToolsResponse>) => {
      const { tenant } = authenticate(call, 'dispatch');
      const tools = new Map(registry.list(tenant).map((tool) => [tool.name, tool]));
      const page = namePage(tools.keys(), {
        pageSize: request.pageSize,
        pageToken: request.pageToken,
        maxBytes: maxResponseBytes,
        entry: (name) => sized(listed(tools.get(name)!, tenant)),
        alone: (name, room) => listedWithin(listed(tools.get(name)!, tenant), room, maxResponseBytes),
      });
      return create(ListToolsResponseSchema, { tools: page.values, nextPageToken: page.nextPageToken, warnings: page.notes });
    }),
    removeTool: unary(logger, async (request: RemoveToolRequest, call: grpc.ServerUnaryCall<RemoveToolRequest, RemoveToolResponse>) => {
      const { tenant } = authenticate(call, 'admin');
      return create(RemoveToolResponseSchema, { removed: await removeShared(registry, tenant, request.name, storeTimeoutMs) });
    }),
  };
}
