import { status } from '@grpc/grpc-js';
import { constants } from 'node:http2';

/**
 * Resets the HTTP/2 stream under a worker's Work stream `call` (RST_STREAM), after its status was
 * queued, when assignments written to it are still waiting to be sent (the worker reads nothing):
 * the status goes out only after them, so a worker ended for not reading (or for its silence) that
 * resumed read each assignment whose call had already failed, and ran it, before it learnt it was
 * ended; dispatch held them meanwhile. The reset drops them; the worker's library tells its status
 * from the code (ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED; CANCEL: CANCELLED). Read from grpc-js
 * 1.14's BaseServerInterceptingCall, as resetByPeer (work-handler.ts) does: should that change,
 * nothing is reset, as before (test/workers/stuck-worker-reset.test.ts would say so).
 */
export function resetUnsent(call: object, code: status): void {
  const stream = (call as { call?: { stream?: { closed?: unknown; close?: unknown } } }).call?.stream;
  if (!stream || stream.closed === true || typeof stream.close !== 'function') return;
  (stream.close as (code: number) => void).call(stream, code === status.RESOURCE_EXHAUSTED ? constants.NGHTTP2_ENHANCE_YOUR_CALM : constants.NGHTTP2_CANCEL);
}
