import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import type { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkerMessageSchema, type WorkAssignment, type WorkerMessage } from '../../gen/dispatch/v1/worker_pb';

/** A Work stream's client: createWorkerClient's, or createServiceClient(WorkerService, ...)'s. */
export interface WorkClient {
  work(): grpc.ClientDuplexStream<unknown, unknown>;
  close(): void;
}

/**
 * A worker on a Work stream of `client`: hello (hosting `tools`, saying `maxReceive` when not 0),
 * heartbeats, and an answer of its argument's length (`{ worker, chars }`) to each assignment but
 * those `hold` keeps unanswered.
 */
export function startCounter(client: WorkClient, id: string, options: { readonly tools: readonly MessageInitShape<typeof ToolSpecSchema>[]; readonly maxReceive?: number; readonly hold?: (text: string) => boolean }) {
  const call = client.work();
  const assignments: WorkAssignment[] = [];
  let ended: grpc.StatusObject | undefined;
  const send = (init: Parameters<typeof create<typeof WorkerMessageSchema>>[1]) => ended === undefined && call.write(create(WorkerMessageSchema, init) satisfies WorkerMessage);
  const heartbeat = setInterval(() => send({ msg: { case: 'heartbeat', value: {} } }), 200);
  call.on('status', (status: grpc.StatusObject) => {
    ended = status;
    clearInterval(heartbeat);
  });
  call.on('error', () => undefined);
  call.on('data', (a: WorkAssignment) => {
    if (a.cancel) return;
    assignments.push(a);
    const text = (JSON.parse(a.call!.arguments) as { text: string }).text;
    if (!options.hold?.(text)) send({ msg: { case: 'completion', value: { assignmentId: a.assignmentId, output: JSON.stringify({ worker: id, chars: text.length }) } } });
  });
  send({ msg: { case: 'hello', value: { workerId: id, tools: [...options.tools], maxReceiveMessageBytes: options.maxReceive ?? 0 } } });
  return {
    assignments,
    ended: () => ended,
    stop() {
      clearInterval(heartbeat);
      call.cancel();
      client.close();
    },
  };
}
