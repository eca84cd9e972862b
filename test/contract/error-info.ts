import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import type * as grpc from '@grpc/grpc-js';
import { ErrorInfoSchema, RetryInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';

/** A failed call's status with the google.rpc.ErrorInfo of its grpc-status-details-bin decoded. */
export interface Info {
  readonly code: grpc.status;
  readonly details: string;
  readonly reason: string | undefined;
  readonly domain: string | undefined;
  readonly metadata: Record<string, string>;
  /** Its google.rpc.RetryInfo's retry_delay in ms; undefined when it carries none. */
  readonly retryDelayMs?: number;
}

/** The status of a failed call (an error, or a stream's status), as any client reads its trailer (ErrorInfo, RetryInfo). */
export function infoOf(error: unknown): Info {
  const { code, details, metadata } = error as grpc.StatusObject;
  const bin = metadata?.get('grpc-status-details-bin')[0];
  const decoded = bin === undefined ? undefined : fromBinary(StatusSchema, bin as Buffer);
  if (decoded) expect({ code: decoded.code, message: decoded.message }).toEqual({ code, message: details });
  const info = decoded?.details.map((any) => anyUnpack(any, ErrorInfoSchema)).find((d) => d !== undefined);
  const retry = decoded?.details.map((any) => anyUnpack(any, RetryInfoSchema)).find((d) => d !== undefined);
  const delay = retry?.retryDelay;
  const retryDelayMs = delay === undefined ? undefined : Number(delay.seconds) * 1000 + delay.nanos / 1e6;
  return { code, details, reason: info?.reason, domain: info?.domain, metadata: { ...info?.metadata }, ...(retryDelayMs === undefined ? {} : { retryDelayMs }) };
}

/** The {@link Info} of a call expected to fail. */
export const failure = (promise: Promise<unknown>): Promise<Info> =>
  promise.then(
    () => {
      throw new Error('the call succeeded');
    },
    (error: unknown) => infoOf(error),
  );
