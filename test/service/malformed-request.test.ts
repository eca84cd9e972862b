import * as grpc from '@grpc/grpc-js';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// The Dispatch request is decoded by hand (src/server/dispatch-request-codec.ts): bytes that are
// not a DispatchRequest end the RPC with INVALID_ARGUMENT (grpc-js answered INTERNAL for any request
// that did not deserialize, until 7a42596: the caller's mistake, not the server's), and the server
// goes on serving.

let d: TestDispatch;
let raw: grpc.Client;

beforeAll(async () => {
  d = await startDispatch(`
tools:
  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
`);
  raw = new grpc.Client(d.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  raw.close();
  await d.close();
});

const send = (bytes: Buffer) =>
  new Promise<grpc.ServiceError | Buffer>((resolve) => {
    const identity = (b: Buffer) => b;
    raw.makeUnaryRequest('/dispatch.v1.DispatchService/Dispatch', identity, identity, bytes, (error, reply) => resolve(error ?? reply!));
  });

test.each([
  ['a string longer than the message', [0x0a, 0x05, 0x61]],
  ['a call whose field runs past the call', [0x1a, 0x03, 0x0a, 0x05, 0x61]],
  ['invalid UTF-8 in the session id', [0x0a, 0x02, 0xc3, 0x28]],
  ['field number 0', [0x00, 0x01]],
])('%s ends the RPC with INVALID_ARGUMENT, and the next Dispatch is served', async (_name, bytes) => {
  const answer = await send(Buffer.from(bytes));
  expect(answer).toBeInstanceOf(Error);
  expect((answer as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
  expect((answer as grpc.ServiceError).details).toMatch(/^the request is not a valid dispatch\.v1\.DispatchRequest \(protobuf or UTF-8\): /);
  const ok = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c1', name: 'echo', arguments: '{"a":1}' }] });
  expect(ok.results[0]!.output).toBe('{"a":1}');
});

test('four MiB of empty calls are counted, not decoded: refused with their number at once, the heap barely moves (found in review)', async () => {
  const calls = 2 * 1024 * 1024 - 8;
  const bytes = Buffer.alloc(calls * 2);
  for (let i = 0; i < calls; i++) bytes[2 * i] = 0x1a; // field 3 (calls), length 0
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const answer = await send(Buffer.concat([Buffer.from([0x0a, 0x01, 0x73]), bytes]));
  const elapsed = performance.now() - started;
  expect((answer as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
  expect((answer as grpc.ServiceError).details).toBe(`${calls} calls in one turn, over the limit of 128`);
  // Decoding two million call objects took ~1 s and ~166 MiB; counting them takes a few ms.
  expect(elapsed).toBeLessThan(2_000);
  expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(100 * 1024 * 1024);
});

test('more offered tools than 10,000 are refused, counted past the bound', async () => {
  const names = 20_000;
  const bytes = Buffer.alloc(names * 3);
  for (let i = 0; i < names; i++) bytes.set([0x32, 0x01, 0x61], 3 * i); // field 6 (offered_tools), "a"
  const answer = await send(Buffer.concat([Buffer.from([0x0a, 0x01, 0x73]), bytes]));
  expect((answer as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
  expect((answer as grpc.ServiceError).details).toBe('20000 offered tools in one turn, over the limit of 10000');
});
