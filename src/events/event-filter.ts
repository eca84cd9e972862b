import { EventKind, type Event, type SubscribeRequest } from '../../gen/dispatch/v1/dispatch_pb';
import { clientIdRefusal } from '../parse/client-id';
import { MAX_TOOL_NAME_CHARS } from '../registry/validate-spec';

/** Which events a subscriber wants; an empty field means any. */
export interface EventFilter {
  readonly sessionId: string;
  readonly tools?: ReadonlySet<string>;
  readonly kinds?: ReadonlySet<EventKind>;
}

/** Bounds on a SubscribeRequest. */
export const MAX_FILTER_TOOLS = 1024;
/**
 * Characters of a filter's tool names together: MAX_FILTER_TOOLS names of the longest a tool may
 * have. A stream keeps its request while it is open: 1,024 names of 4,000 characters held ~4.2 MB
 * of the server's heap per stream, some 270 MB for a tenant's 64.
 */
export const MAX_FILTER_TOOL_CHARS = MAX_FILTER_TOOLS * MAX_TOOL_NAME_CHARS;

/** The filter of a SubscribeRequest, or a message saying what is wrong with it. */
export function filterOf(request: SubscribeRequest): EventFilter | string {
  // The rule of client ids (client-id.ts): a session past it is no turn's; an empty one means any.
  const refusal = clientIdRefusal('session_id', request.sessionId, 'a session id');
  if (refusal !== undefined) return refusal;
  if (request.tools.length > MAX_FILTER_TOOLS) return `${request.tools.length} tools in the filter, over the limit of ${MAX_FILTER_TOOLS}`;
  const chars = request.tools.reduce((sum, tool) => sum + tool.length, 0);
  if (chars > MAX_FILTER_TOOL_CHARS) return `the tools in the filter take ${chars} characters, over the limit of ${MAX_FILTER_TOOL_CHARS} (${MAX_FILTER_TOOLS} names of ${MAX_TOOL_NAME_CHARS} characters, the longest a tool name may be)`;
  for (const kind of request.kinds) {
    if (kind === EventKind.UNSPECIFIED || EventKind[kind] === undefined) return `unknown event kind ${kind}`;
  }
  return {
    sessionId: request.sessionId,
    tools: request.tools.length > 0 ? new Set(request.tools) : undefined,
    kinds: request.kinds.length > 0 ? new Set(request.kinds) : undefined,
  };
}

/** True when `event` passes `filter`. Events outside any session (breaker changes) fail a session filter. */
export function matches(filter: EventFilter, event: Event): boolean {
  if (filter.sessionId !== '' && event.sessionId !== filter.sessionId) return false;
  if (filter.tools && !filter.tools.has(event.tool)) return false;
  return !filter.kinds || filter.kinds.has(event.kind);
}
