import { create, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { ParseToolCallsResponseSchema, type ParseToolCallsRequest, type ParseToolCallsResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../log';
import type { Limits } from '../options';
import { parseToolCalls, positionalParametersOf, textParametersOf } from '../parse';
import type { ResolvedTool, ToolRegistry } from '../registry';
import { MAX_OFFERED_TOOLS } from './dispatch-request-codec';
import { invalidArgument, RpcError, unary } from './grpc-adapter';
import { checkOfferedNames } from './offered-tools';
import type { Authenticator } from './principal';

/**
 * Dispatch's bounds on `offered_tools` (dispatch-service.ts), here too: the list is the one the
 * turn's Dispatch sends, which refuses it past them. Unbounded, 4 MiB of short names were ~700,000
 * strings put in a Set by the parse, ~0.5 s of the event loop every tenant shares per request.
 */
function checkOfferedTools(names: readonly string[]): void {
  if (names.length > MAX_OFFERED_TOOLS) {
    throw invalidArgument('offered_tools', `${names.length} offered tools, over the limit of ${MAX_OFFERED_TOOLS}`);
  }
  checkOfferedNames(names);
}

/**
 * What `read` makes of the schema of the tool Dispatch would run for `tenant` by a name (the
 * operator's tool of a name, else the tenant's own), read once per tool in `cache` (a tool changed
 * is a new object); undefined for a name no tool of theirs has, which is then read as before.
 */
function fromSchemas<T extends object>(registry: Pick<ToolRegistry, 'lookup'>, tenant: string, cache: WeakMap<ResolvedTool, T>, read: (schema: unknown) => T): (name: string) => T | undefined {
  return (name) => {
    const tool = registry.lookup(tenant, name);
    if (tool === undefined) return undefined;
    let found = cache.get(tool);
    if (found === undefined) {
      found = read(tool.schema);
      cache.set(tool, found);
    }
    return found;
  };
}

/** Each tool's text parameters (a Qwen3-Coder or GLM value for a string parameter stays text, as validation wants it). */
const textParametersByTool = new WeakMap<ResolvedTool, ReturnType<typeof textParametersOf>>();
/** Each tool's positional parameters (`get_weather("Paris")` names `city`; see `positionalParametersOf`). */
const positionalParametersByTool = new WeakMap<ResolvedTool, readonly string[]>();

/**
 * ParseToolCalls: finds the tool calls in raw model output; it never fails on the text itself.
 * With `registry`, values and positional arguments are read by the caller's tools' schemas (see `fromSchemas`).
 */
export function parseHandler(authenticate: Authenticator, limits: Limits, logger: Logger, registry?: Pick<ToolRegistry, 'lookup'>) {
  return unary(logger, async (request: ParseToolCallsRequest, call: grpc.ServerUnaryCall<ParseToolCallsRequest, ParseToolCallsResponse>) => {
    const { tenant } = authenticate(call, 'dispatch');
    checkOfferedTools(request.offeredTools);
    const textParameters = registry === undefined ? undefined : fromSchemas(registry, tenant, textParametersByTool, textParametersOf);
    const positionalParameters = registry === undefined ? undefined : fromSchemas(registry, tenant, positionalParametersByTool, positionalParametersOf);
    const parsed = parseToolCalls(request.text, request.offeredTools, { maxInputChars: limits.maxMessageBytes, maxCalls: limits.maxCallsPerTurn, textParameters, positionalParameters });
    const response = create(ParseToolCallsResponseSchema, { calls: parsed.calls, remainingText: parsed.remainingText, format: parsed.format, warnings: parsed.warnings ?? [] });
    // Arguments are answered as JSON, which may take up to 6x the text they came from (a raw
    // control character is written \u0001): past max_response_bytes the client would refuse it
    // (grpc-js, past max_message_bytes, would send only "Sent message larger than max"). Say what
    // happened and what to do instead.
    let units = parsed.remainingText.length + parsed.format.length;
    for (const warning of parsed.warnings ?? []) units += warning.length + 4;
    for (const found of parsed.calls) units += found.id.length + found.name.length + found.arguments.length + 16;
    const bytes = 3 * units > limits.maxResponseBytes ? toBinary(ParseToolCallsResponseSchema, response).length : 0;
    if (bytes > limits.maxResponseBytes) {
      // A text just under the limit with no call in it comes back whole as remaining_text, beside
      // the format: over the limit by a few bytes. Name what takes the room.
      const what = parsed.calls.length === 0 ? `its remaining text (${parsed.remainingText.length} characters, no call found)` : `the ${parsed.calls.length} calls found, written as JSON, and the remaining text (${parsed.remainingText.length} characters)`;
      throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `the answer takes ${bytes} bytes, over max_response_bytes (${limits.maxResponseBytes}): ${what}; send the text in smaller parts`, 'RESPONSE_TOO_LARGE', { bytes, max_response_bytes: limits.maxResponseBytes });
    }
    return response;
  });
}
