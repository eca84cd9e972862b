export { startServer } from './create-server';
export type { DispatchServer, ServerOptions, ExtraHandlers } from './create-server';
export { RpcError, serviceDefinition, toServiceError, unary, unimplemented } from './grpc-adapter';
export { allowAll, DEFAULT_TENANT } from './principal';
export type { Authenticator, Principal, Scope } from './principal';
export type { ParallelDispatcher } from './dispatch-service';
export { projectRoot } from './project-root';
export { HEALTH_SERVICES } from './health-and-reflection';
