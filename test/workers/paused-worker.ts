import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import * as http2 from 'node:http2';
import { ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { WorkAssignmentSchema, WorkerMessageSchema } from '../../gen/dispatch/v1/worker_pb';

/**
 * A worker that says hello with `spec` and heartbeats, and reads nothing until `resume`: a bare
 * HTTP/2 stream left paused, so that flow control stops dispatch's writes (a grpc-js client in
 * this process would go on reading into its own buffers).
 */
export function startPausedWorker(address: string, workerId: string, spec: MessageInitShape<typeof ToolSpecSchema>) {
  const session = http2.connect(`http://${address}`);
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'POST', ':path': '/dispatch.v1.WorkerService/Work', 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined);
  stream.pause();
  let closedAt: number | undefined;
  stream.on('close', () => (closedAt = Date.now()));
  let trailers: http2.IncomingHttpHeaders | undefined;
  stream.on('trailers', (headers) => (trailers = headers));
  const send = (msg: MessageInitShape<typeof WorkerMessageSchema>) => {
    const bytes = toBinary(WorkerMessageSchema, create(WorkerMessageSchema, msg));
    const frame = Buffer.alloc(5 + bytes.length);
    frame.writeUInt32BE(bytes.length, 1);
    frame.set(bytes, 5);
    if (!stream.closed) stream.write(frame);
  };
  send({ msg: { case: 'hello', value: { workerId, tools: [create(ToolSpecSchema, spec)] } } });
  const heartbeat = setInterval(() => send({ msg: { case: 'heartbeat', value: {} } }), 200);
  return {
    closedAt: () => closedAt,
    /** How its stream ended: the reset's code (0 when ended by trailers), and the trailers that came. */
    ending: () => ({ rstCode: stream.rstCode, trailers }),
    /** Reads on: the assignments (not cancels) it then receives. */
    resume(): string[] {
      const ids: string[] = [];
      let buffered = Buffer.alloc(0);
      stream.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
          const length = buffered.readUInt32BE(1);
          const a = fromBinary(WorkAssignmentSchema, buffered.subarray(5, 5 + length));
          buffered = buffered.subarray(5 + length);
          if (!a.cancel) ids.push(a.call?.id ?? '');
        }
      });
      stream.resume();
      return ids;
    },
    close() {
      clearInterval(heartbeat);
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      session.destroy();
    },
  };
}
