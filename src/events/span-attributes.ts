/**
 * Attribute names on spans and events: the OpenTelemetry GenAI conventions, then dispatch's own.
 * Spans carry each fact once (a child does not repeat its parent's), since every attribute costs
 * on every call while tracing is on; events carry what a reader of one line needs.
 */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  httpMethod: 'http.request.method',
  urlFull: 'url.full',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  rpcSystem: 'rpc.system',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  tenant: 'dispatch.tenant',
  sessionId: 'dispatch.session_id',
  turn: 'dispatch.turn',
  calls: 'dispatch.calls',
  attempt: 'dispatch.attempt',
  attempts: 'dispatch.attempts',
  effect: 'dispatch.effect',
  outcome: 'dispatch.outcome',
  replay: 'dispatch.replay',
  cached: 'dispatch.cached',
  truncated: 'dispatch.truncated',
  durationMs: 'dispatch.duration_ms',
  outputChars: 'dispatch.output_chars',
  resolvedTool: 'dispatch.resolved_tool',
  errorPhase: 'dispatch.error.phase',
  policy: 'dispatch.policy',
  argumentsShape: 'dispatch.arguments.shape',
  argumentsText: 'dispatch.arguments',
  argumentsModified: 'dispatch.arguments.modified',
  retryDelayMs: 'dispatch.retry.delay_ms',
  reason: 'dispatch.reason',
  message: 'dispatch.message',
  approvalId: 'dispatch.approval_id',
  approvalDecision: 'dispatch.approval.decision',
  approvalDecidedBy: 'dispatch.approval.decided_by',
  breakerState: 'dispatch.breaker.state',
} as const;

/** The GenAI operation of a call span. */
export const EXECUTE_TOOL = 'execute_tool';

/** The gRPC service and method a turn span serves (its `rpc.service` and `rpc.method`). */
export const RPC_SERVICE = 'dispatch.v1.DispatchService';
export const RPC_METHOD = 'Dispatch';

/** The name of the turn span: the gRPC method it serves. */
export const TURN_SPAN_NAME = 'dispatch.v1.DispatchService/Dispatch';

/** The outcome attribute of a success; failures carry the error kind's short name (`TIMEOUT`). */
export const OUTCOME_OK = 'ok';
