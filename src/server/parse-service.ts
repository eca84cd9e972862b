import { create } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { ParseToolCallsResponseSchema, type ParseToolCallsRequest, type ParseToolCallsResponse } from '../../gen/dispatch/v1/dispatch_pb';
import type { Logger } from '../log';
import type { Limits } from '../options';
import { parseToolCalls } from '../parse';
import { unary } from './grpc-adapter';
import type { Authenticator } from './principal';

/** ParseToolCalls: finds the tool calls in raw model output; it never fails on the text itself. */
export function parseHandler(authenticate: Authenticator, limits: Limits, logger: Logger) {
  return unary(logger, async (request: ParseToolCallsRequest, call: grpc.ServerUnaryCall<ParseToolCallsRequest, ParseToolCallsResponse>) => {
    authenticate(call, 'dispatch');
    const parsed = parseToolCalls(request.text, request.offeredTools, { maxInputChars: limits.maxMessageBytes, maxCalls: limits.maxCallsPerTurn });
    return create(ParseToolCallsResponseSchema, { calls: parsed.calls, remainingText: parsed.remainingText, format: parsed.format });
  });
}
