import { create } from '@bufbuild/protobuf';
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
import type { ToolSpec } from '../../gen/dispatch/v1/tool_pb';
import type { Logger } from '../log';
import { answerWithin } from '../pipeline';
import { RegistryError, type ResolvedTool, type ToolRegistry } from '../registry';
import { listedUrl, REDACTED } from './listed-url';
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
 * `prefix`) that the message begins with.
 */
export function registryRpcError(error: RegistryError, prefix = ''): RpcError {
  const spec = /^tools\[\d+\]/.exec(error.message)?.[0];
  return new RpcError(REGISTRY_ERROR_STATUS[error.code], error.message, REGISTRY_ERROR_REASON[error.code], { field: spec === undefined ? undefined : prefix + spec });
}

/**
 * RemoveTool's answer: whether the tool was registered, once its removal is shared (written to
 * Redis and announced, see ToolRegistry.removeShared). UNAVAILABLE when that failed (the tool is
 * then still registered here) or took longer than `timeoutMs`; either way asking again is safe.
 */
async function removeShared(registry: ToolRegistry, tenant: string, name: string, timeoutMs: number): Promise<boolean> {
  let removed: boolean | undefined;
  try {
    removed = await answerWithin(registry.removeShared(tenant, name), timeoutMs);
  } catch (error) {
    throw new RpcError(grpc.status.UNAVAILABLE, `tool "${name}" was not removed: its removal could not be written to Redis (${(error as Error).message}); it is still registered, call RemoveTool again`, 'STORE_UNAVAILABLE', { tool: name });
  }
  if (removed !== undefined) return removed;
  throw new RpcError(grpc.status.UNAVAILABLE, `tool "${name}" was not removed within ${timeoutMs} ms (limits.store_timeout_ms): Redis has not confirmed its removal, which may still take effect; call RemoveTool again`, 'STORE_UNAVAILABLE', { tool: name });
}

/**
 * RegisterTools, ListTools and RemoveTool over a registry; tools belong to the caller's tenant,
 * which may own at most `maxToolsPerTenant` of them. RemoveTool waits up to `storeTimeoutMs` for
 * its removal to be shared.
 */
export function registryHandlers(registry: ToolRegistry, authenticate: Authenticator, logger: Logger, limits: { readonly maxToolsPerTenant: number; readonly storeTimeoutMs: number }) {
  const { maxToolsPerTenant, storeTimeoutMs } = limits;
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
    listTools: unary(logger, async (_request: ListToolsRequest, call: grpc.ServerUnaryCall<ListToolsRequest, ListToolsResponse>) => {
      const { tenant } = authenticate(call, 'dispatch');
      return create(ListToolsResponseSchema, { tools: registry.list(tenant).map((t) => listed(t, tenant)) });
    }),
    removeTool: unary(logger, async (request: RemoveToolRequest, call: grpc.ServerUnaryCall<RemoveToolRequest, RemoveToolResponse>) => {
      const { tenant } = authenticate(call, 'admin');
      return create(RemoveToolResponseSchema, { removed: await removeShared(registry, tenant, request.name, storeTimeoutMs) });
    }),
  };
}
