import * as grpc from '@grpc/grpc-js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { EventKind, type Event, type SubscribeRequestSchema } from '../../../gen/dispatch/v1/dispatch_pb';
import type { CallOptions, createDispatchClient } from '../../../src/client';

/** A Subscribe stream whose events are collected. */
export interface EventCollector {
  readonly events: Event[];
  /** The status the stream ended with, once it has. */
  readonly ended: Promise<grpc.status>;
  /** Resolves true once an event matches, false after `timeoutMs`. */
  waitFor(match: (e: Event) => boolean, timeoutMs?: number): Promise<boolean>;
  /** Resolves once the server has had time to register the subscriber (first message or a short wait). */
  ready(): Promise<void>;
  cancel(): void;
}

/** Opens Subscribe and collects every event it delivers. */
export function collectEvents(client: ReturnType<typeof createDispatchClient>, request: MessageInitShape<typeof SubscribeRequestSchema>, options: CallOptions = {}): EventCollector {
  const stream = client.subscribe(request, options) as grpc.ClientReadableStream<Event>;
  const events: Event[] = [];
  const waiters: (() => void)[] = [];
  stream.on('data', (e: Event) => {
    events.push(e);
    for (const w of waiters.splice(0)) w();
  });
  const ended = new Promise<grpc.status>((resolve) => {
    stream.on('error', (error: grpc.ServiceError) => resolve(error.code));
    stream.on('status', (s: grpc.StatusObject) => resolve(s.code));
  });
  return {
    events,
    ended,
    cancel: () => stream.cancel(),
    ready: () => new Promise((r) => setTimeout(r, 150)),
    waitFor(match, timeoutMs = 3000) {
      return new Promise((resolve) => {
        const end = Date.now() + timeoutMs;
        const check = () => {
          if (events.some(match)) return resolve(true);
          if (Date.now() >= end) return resolve(false);
          waiters.push(check);
          setTimeout(check, Math.max(0, Math.min(100, end - Date.now())));
        };
        check();
      });
    },
  };
}

export const isTurnEnd = (sessionId: string) => (e: Event) => e.kind === EventKind.TURN_END && e.sessionId === sessionId;
