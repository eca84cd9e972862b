import type { MessageInitShape } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { EventKind, type Event, type SubscribeRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { createDispatchClient } from '../../src/client';

/** A config file of one tool, `echo` (read-only, the built-in echo). */
export const ECHO_TOOL_YAML = `
tools:
  - name: echo
    effect: read_only
    input_schema: '{"type":"object"}'
    builtin: { name: echo }
`;

/** A live Subscribe stream collecting what it receives. */
export interface EventTap {
  readonly events: Event[];
  /** The status the stream ended with, once it ended. */
  readonly status: () => grpc.StatusObject | undefined;
  readonly error: () => grpc.ServiceError | undefined;
  waitFor(predicate: (events: Event[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * Subscribes at `address` and resolves once the server has registered the subscriber (it sends
 * its headers then), or rejects with the RPC's error.
 */
export async function tapEvents(address: string, request: MessageInitShape<typeof SubscribeRequestSchema> = {}, metadata: Record<string, string> = {}): Promise<EventTap> {
  const client = createDispatchClient(address);
  const stream = client.subscribe(request, { metadata });
  const events: Event[] = [];
  let status: grpc.StatusObject | undefined;
  let error: grpc.ServiceError | undefined;
  stream.on('data', (e: Event) => events.push(e));
  stream.on('status', (s: grpc.StatusObject) => (status = s));
  await new Promise<void>((resolve, reject) => {
    stream.once('metadata', () => resolve());
    stream.once('error', (e: grpc.ServiceError) => {
      error = e;
      reject(e);
    });
  }).catch((e: unknown) => {
    client.close();
    throw e;
  });
  stream.on('error', (e: grpc.ServiceError) => (error = e));
  return {
    events,
    status: () => status,
    error: () => error,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`events: condition not met in ${timeoutMs} ms; got ${describe(events).join(' ')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close() {
      stream.cancel();
      client.close();
    },
  };
}

/** `KIND:call#attempt` per event, the shape the sequence tests compare. */
export function describe(events: readonly Event[]): string[] {
  return events.map((e) => `${EventKind[e.kind]}${e.toolCallId ? `:${e.toolCallId}` : ''}${e.attempt ? `#${e.attempt}` : ''}`);
}

/** The events of one session, in order. */
export const ofSession = (events: readonly Event[], sessionId: string) => events.filter((e) => e.sessionId === sessionId);

/** True once a TURN_END of `sessionId` arrived (`count` of them). */
export const turnEnded = (sessionId: string, count = 1) => (events: Event[]) => events.filter((e) => e.sessionId === sessionId && e.kind === EventKind.TURN_END).length >= count;

/** The TOOL_POST outcomes (`[call, outcome, error.type]`) and the TURN_END outcome of `sessionId`. */
export const callOutcomes = (events: readonly Event[], sessionId: string) => {
  const own = ofSession(events, sessionId);
  return {
    posts: own.filter((e) => e.kind === EventKind.TOOL_POST).map((e) => [e.toolCallId, e.attributes['dispatch.outcome'], e.attributes['error.type']]),
    turn: own.find((e) => e.kind === EventKind.TURN_END)?.attributes['dispatch.outcome'],
  };
};
