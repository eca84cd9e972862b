import { create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { WorkerMessageSchema } from '../../../gen/dispatch/v1/worker_pb';
import { createWorkerClient, type CallOptions } from '../../../src/client';
import type { AuthApp } from './auth-app';

/** One RPC of the contract, called with minimal valid input; resolves with its status code. */
export interface RpcProbe {
  readonly method: string;
  readonly scope: 'dispatch' | 'subscribe' | 'admin' | 'worker';
  call(app: AuthApp, options: CallOptions): Promise<grpc.status | 'ok'>;
}

const unaryCode = async (promise: Promise<unknown>): Promise<grpc.status | 'ok'> => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as grpc.ServiceError).code;
  }
};

/** The status a stream ends with, or 'ok' if it delivered a message or stayed open for `openMs`. */
function streamCode(stream: grpc.ClientReadableStream<unknown> | grpc.ClientDuplexStream<unknown, unknown>, openMs = 300): Promise<grpc.status | 'ok'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stream.cancel();
      resolve('ok');
    }, openMs);
    stream.on('data', () => {
      clearTimeout(timer);
      stream.cancel();
      resolve('ok');
    });
    stream.on('error', (error: grpc.ServiceError) => {
      clearTimeout(timer);
      resolve(error.code === grpc.status.CANCELLED ? 'ok' : error.code);
    });
    stream.on('status', (s: grpc.StatusObject) => {
      clearTimeout(timer);
      resolve(s.code === grpc.status.OK ? 'ok' : s.code);
    });
  });
}

/** Every RPC of the three services with the scope DESIGN section 11 requires. */
export const RPCS: readonly RpcProbe[] = [
  { method: 'Dispatch', scope: 'dispatch', call: (a, o) => unaryCode(a.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{}' }] }, o)) },
  { method: 'ParseToolCalls', scope: 'dispatch', call: (a, o) => unaryCode(a.dispatch.parseToolCalls({ text: 'hello' }, o)) },
  { method: 'ReadResult', scope: 'dispatch', call: async (a, o) => {
    const code = await unaryCode(a.dispatch.readResult({ resultHandle: 'rh_cw.AAAAAAAAAAAAAAAA' }, o));
    return code === grpc.status.NOT_FOUND ? 'ok' : code;
  } },
  { method: 'ResolveApproval', scope: 'dispatch', call: async (a, o) => {
    const code = await unaryCode(a.dispatch.resolveApproval({ approvalId: 'none', approve: false }, o));
    return code === grpc.status.NOT_FOUND ? 'ok' : code;
  } },
  { method: 'ListApprovals', scope: 'dispatch', call: (a, o) => unaryCode(a.dispatch.listApprovals({}, o)) },
  { method: 'EndSession', scope: 'dispatch', call: (a, o) => unaryCode(a.dispatch.endSession({ sessionId: 's' }, o)) },
  { method: 'ListTools', scope: 'dispatch', call: (a, o) => unaryCode(a.registry.listTools({}, o)) },
  { method: 'GetToolStats', scope: 'dispatch', call: (a, o) => unaryCode(a.registry.getToolStats({ tool: 'echo' }, o)) },
  { method: 'Subscribe', scope: 'subscribe', call: (a, o) => streamCode(a.dispatch.subscribe({}, o)) },
  { method: 'RegisterTools', scope: 'admin', call: (a, o) => unaryCode(a.registry.registerTools({ tools: [{ name: 'probe_tool', executor: { case: 'builtin', value: { name: 'echo' } } }], replace: true }, o)) },
  { method: 'RemoveTool', scope: 'admin', call: (a, o) => unaryCode(a.registry.removeTool({ name: 'probe_tool' }, o)) },
  { method: 'Work', scope: 'worker', call: (a, o) => workCode(a, o) },
];

async function workCode(app: AuthApp, options: CallOptions): Promise<grpc.status | 'ok'> {
  const client = createWorkerClient(app.address);
  try {
    const stream = client.work(options);
    stream.write(create(WorkerMessageSchema, { msg: { case: 'hello', value: { workerId: 'probe', tools: [] } } }));
    return await streamCode(stream);
  } finally {
    client.close();
  }
}
