import type * as grpc from '@grpc/grpc-js';

/**
 * The statuses refusing undecodable messages on a stream (MALFORMED_REQUEST), by identity, with
 * what was wrong: a stream's handler hears such a refusal only as its call's 'error'
 * (grpc-adapter's `refusing`), which it would otherwise take for the peer going away (a worker that
 * answered with invalid UTF-8 had its calls told it "disconnected", recoverable, and a read-only
 * one was retried into the same answer).
 */
const malformedStatuses = new WeakMap<object, string>();

/** Marks `status` as the refusal of an undecodable message, `what` being wrong with it (see malformedMessage); returns it. */
export function markMalformed<S extends Partial<grpc.StatusObject>>(status: S, what: string): S {
  malformedStatuses.set(status, what);
  return status;
}

/**
 * What was wrong with the message a stream was refused for ("not a valid dispatch.v1.WorkerMessage
 * (protobuf or UTF-8): invalid UTF-8 in a string field"), when `error`, heard as the call's
 * 'error', is such a refusal; else undefined.
 */
export function malformedMessage(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? malformedStatuses.get(error) : undefined;
}
