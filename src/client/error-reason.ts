import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import type * as grpc from '@grpc/grpc-js';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';

/**
 * The google.rpc.ErrorInfo reason of a failed RPC (LOOP_DETECTED, OVERLOADED, SHUTTING_DOWN...),
 * read from its `grpc-status-details-bin` trailer: what a client branches on, where the status
 * code alone is shared by several causes. '' without one, or when it cannot be decoded (a status
 * that a proxy or grpc-js itself made).
 */
export function errorReason(error: grpc.ServiceError): string {
  const bin = error.metadata?.get('grpc-status-details-bin')[0];
  if (!(bin instanceof Buffer)) return '';
  try {
    for (const any of fromBinary(StatusSchema, bin).details) {
      const reason = anyUnpack(any, ErrorInfoSchema)?.reason;
      if (reason) return reason;
    }
  } catch {
    // Not a google.rpc.Status: nothing to branch on.
  }
  return '';
}
