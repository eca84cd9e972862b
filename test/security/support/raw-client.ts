import * as grpc from '@grpc/grpc-js';
import { DispatchService } from '../../../gen/dispatch/v1/dispatch_pb';
import { ToolRegistryService } from '../../../gen/dispatch/v1/registry_pb';
import { WorkerService } from '../../../gen/dispatch/v1/worker_pb';

/** An RPC path and its streaming kind, from the generated service descriptors. */
export interface MethodPath {
  readonly path: string;
  readonly kind: 'unary' | 'server_streaming' | 'client_streaming' | 'bidi_streaming';
}

/** Every method of the three dispatch.v1 services. */
export const METHOD_PATHS: readonly MethodPath[] = [DispatchService, ToolRegistryService, WorkerService].flatMap((service) =>
  service.methods.map((m) => ({ path: `/${service.typeName}/${m.name}`, kind: m.methodKind })),
);

const identity = (b: Buffer) => b;

/** The final status of sending `bytes` as the request of `method` (streams are ended or cancelled within `deadlineMs`). */
export function sendRaw(client: grpc.Client, method: MethodPath, bytes: Buffer, deadlineMs = 2000, metadata = new grpc.Metadata()): Promise<grpc.StatusObject> {
  const deadline = Date.now() + deadlineMs;
  return new Promise((resolve) => {
    if (method.kind === 'unary') {
      const call = client.makeUnaryRequest(method.path, identity, identity, bytes, metadata, { deadline }, () => undefined);
      call.on('status', resolve);
      return;
    }
    let stream: grpc.ClientReadableStream<Buffer>;
    if (method.kind === 'server_streaming') stream = client.makeServerStreamRequest(method.path, identity, identity, bytes, metadata, { deadline });
    else {
      const duplex = client.makeBidiStreamRequest(method.path, identity, identity, metadata, { deadline });
      duplex.write(bytes);
      duplex.end();
      stream = duplex;
    }
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('status', resolve);
    setTimeout(() => stream.cancel(), Math.max(50, deadlineMs / 4)).unref();
  });
}

/** grpc.health.v1.Health/Check of the whole server: true when SERVING. */
export function healthy(client: grpc.Client): Promise<boolean> {
  return new Promise((resolve) =>
    client.makeUnaryRequest('/grpc.health.v1.Health/Check', identity, identity, Buffer.alloc(0), new grpc.Metadata(), { deadline: Date.now() + 2000 }, (error, value) =>
      resolve(!error && value !== undefined && value.equals(Buffer.from([8, 1]))),
    ),
  );
}
