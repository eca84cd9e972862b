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
import { RegistryError, type ToolRegistry } from '../registry';
import { RpcError, unary } from './grpc-adapter';
import type { Authenticator } from './principal';

/** What ListTools shows for a header's value (a URL's credentials become `redacted@`). */
export const REDACTED = '[redacted]';

/**
 * A tool as ListTools shows it: an HTTP tool's header values and any credentials in its URL are
 * redacted. The operator's tools (the config file's) are listed to every tenant, and their headers
 * are where their credentials live (`authorization: Bearer ...`).
 */
function listed(spec: ToolSpec): ToolSpec {
  if (spec.executor.case !== 'http') return spec;
  const http = spec.executor.value;
  const names = Object.keys(http.headers);
  let url = http.url;
  try {
    const parsed = new URL(url);
    if (parsed.username !== '' || parsed.password !== '') {
      parsed.username = 'redacted';
      parsed.password = '';
      url = parsed.toString();
    }
  } catch {
    // Checked at registration; a URL that does not parse is shown as it is.
  }
  if (names.length === 0 && url === http.url) return spec;
  const headers = Object.fromEntries(names.map((name) => [name, REDACTED]));
  return { ...spec, executor: { case: 'http', value: { ...http, url, headers } } };
}

/** The status answering a registration the registry refused (RegisterTools, a worker's hello). */
export const REGISTRY_ERROR_STATUS: Readonly<Record<RegistryError['code'], grpc.status>> = {
  invalid: grpc.status.INVALID_ARGUMENT,
  exists: grpc.status.ALREADY_EXISTS,
  limit: grpc.status.RESOURCE_EXHAUSTED,
};

/**
 * RegisterTools, ListTools and RemoveTool over a registry; tools belong to the caller's tenant,
 * which may own at most `maxToolsPerTenant` of them.
 */
export function registryHandlers(registry: ToolRegistry, authenticate: Authenticator, logger: Logger, maxToolsPerTenant: number) {
  return {
    registerTools: unary(logger, async (request: RegisterToolsRequest, call: grpc.ServerUnaryCall<RegisterToolsRequest, RegisterToolsResponse>) => {
      const { tenant } = authenticate(call, 'admin');
      try {
        const tools = registry.register(request.tools, { tenant, replace: request.replace, maxTools: maxToolsPerTenant });
        return create(RegisterToolsResponseSchema, { registered: tools.length });
      } catch (error) {
        if (!(error instanceof RegistryError)) throw error;
        throw new RpcError(REGISTRY_ERROR_STATUS[error.code], error.message);
      }
    }),
    listTools: unary(logger, async (_request: ListToolsRequest, call: grpc.ServerUnaryCall<ListToolsRequest, ListToolsResponse>) => {
      const { tenant } = authenticate(call, 'dispatch');
      return create(ListToolsResponseSchema, { tools: registry.list(tenant).map((t) => listed(t.spec)) });
    }),
    removeTool: unary(logger, async (request: RemoveToolRequest, call: grpc.ServerUnaryCall<RemoveToolRequest, RemoveToolResponse>) => {
      const { tenant } = authenticate(call, 'admin');
      return create(RemoveToolResponseSchema, { removed: registry.remove(tenant, request.name) });
    }),
  };
}
