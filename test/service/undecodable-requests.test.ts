import * as grpc from '@grpc/grpc-js';
import { startApp, type TestDispatch } from '../helpers/servers';

// A request its deserializer cannot read (malformed protobuf, invalid UTF-8 in a string field) is
// the client's fault: INVALID_ARGUMENT naming the message, not grpc-js's INTERNAL "Error
// deserializing request". Sent as raw bytes by a real grpc-js client.

const identity = (value: Buffer) => value;
const method = (path: string, requestStream: boolean, responseStream: boolean) => ({ path, requestStream, responseStream, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity });
const RawClient = grpc.makeGenericClientConstructor(
  {
    dispatch: method('/dispatch.v1.DispatchService/Dispatch', false, false),
    subscribe: method('/dispatch.v1.DispatchService/Subscribe', false, true),
    work: method('/dispatch.v1.WorkerService/Work', true, true),
  },
  'Raw',
);
type Raw = InstanceType<typeof RawClient> & Record<'dispatch', (request: Buffer, callback: (error: grpc.ServiceError | null) => void) => grpc.ClientUnaryCall> & Record<'subscribe', (request: Buffer) => grpc.ClientReadableStream<Buffer>> & Record<'work', () => grpc.ClientDuplexStream<Buffer, Buffer>>;

/** session_id (field 1) holding the bytes FF FE: not UTF-8. */
const BAD_UTF8 = Buffer.from([0x0a, 0x02, 0xff, 0xfe]);
/** A length-delimited field 1 of 5 bytes with 1 present. */
const TRUNCATED = Buffer.from([0x0a, 0x05, 0x61]);

let d: TestDispatch;
let raw: Raw;
beforeAll(async () => {
  d = await startApp('tools: []\n');
  raw = new RawClient(d.address, grpc.credentials.createInsecure()) as Raw;
});
afterAll(async () => {
  raw.close();
  await d.close();
});

const statusOf = (stream: grpc.ClientReadableStream<Buffer> | grpc.ClientDuplexStream<Buffer, Buffer>) =>
  new Promise<grpc.StatusObject>((resolve) => {
    stream.on('error', () => undefined);
    stream.on('data', () => undefined);
    stream.on('status', resolve);
  });

test.each([
  ['invalid UTF-8', BAD_UTF8, 'invalid UTF-8 in a string field'],
  ['malformed protobuf', TRUNCATED, 'premature EOF'],
])('Dispatch: %s is INVALID_ARGUMENT naming the message', async (_name, bytes, detail) => {
  const error = await new Promise<grpc.ServiceError | null>((resolve) => raw.dispatch(bytes, resolve));
  expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(error?.details).toBe(`the request is not a valid dispatch.v1.DispatchRequest (protobuf or UTF-8): ${detail}`);
});

test('Subscribe (server streaming): invalid UTF-8 is INVALID_ARGUMENT', async () => {
  const status = await statusOf(raw.subscribe(BAD_UTF8));
  expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(status.details).toMatch(/^the request is not a valid dispatch\.v1\.SubscribeRequest \(protobuf or UTF-8\): \S/);
});

test('Work (bidi streaming): a malformed message ends the stream INVALID_ARGUMENT', async () => {
  const stream = raw.work();
  const status = statusOf(stream);
  stream.write(TRUNCATED);
  expect((await status).code).toBe(grpc.status.INVALID_ARGUMENT);
  expect((await status).details).toMatch(/^the request is not a valid dispatch\.v1\.WorkerMessage \(protobuf or UTF-8\): \S/);
  stream.end();
});

test('a valid request after them is served', async () => {
  const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [] });
  expect(results).toEqual([]);
});
