// Arbitrary bytes at every RPC of the three services (fast-check): random bytes, mutated valid
// requests and well-formed wire data with random fields. Each answer is a well-formed gRPC status,
// no handler fails with an unexpected (logged) error, and the server stays healthy.
import { create, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { DispatchRequestSchema } from '../../gen/dispatch/v1/dispatch_pb';
import { RegisterToolsRequestSchema } from '../../gen/dispatch/v1/registry_pb';
import { createLogger } from '../../src/log';
import { startAuthApp, type AuthApp } from './support/auth-app';
import { healthy, METHOD_PATHS, sendRaw } from './support/raw-client';
import { wireMessage } from './support/wire-arbitrary';

/** Runs per method; FUZZ_RUNS raises it for a longer search. */
const RUNS_UNARY = Number(process.env.FUZZ_RUNS ?? 120);
const RUNS_STREAM = 30;
/**
 * A stream the bytes opened is cancelled after a quarter of this (sendRaw): 200 ms, time for the
 * server (in this process) to read the request and run its handler; with the default of 2 s,
 * each Subscribe stream the bytes opened waited 500 ms.
 */
const STREAM_DEADLINE_MS = 800;

let app: AuthApp;
let client: grpc.Client;
const errors: string[] = [];

beforeAll(async () => {
  app = await startAuthApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n  - name: nap\n    effect: read_only\n    timeout_ms: 200\n    builtin: { name: sleep }\n', {
    logger: createLogger('error', (line) => errors.push(line) > 0),
  });
  client = new grpc.Client(app.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await app.close();
});

/** Valid requests, so that mutations of them reach past the decoder into the handlers. */
const SEEDS: readonly Buffer[] = [
  Buffer.from(toBinary(DispatchRequestSchema, create(DispatchRequestSchema, { sessionId: 's', turn: 1, calls: [{ id: 'c', name: 'echo', arguments: '{"a":[1,2,{"b":null}]}' }, { id: 'd', name: 'nap', arguments: '{"ms":1}' }] }))),
  Buffer.from(toBinary(RegisterToolsRequestSchema, create(RegisterToolsRequestSchema, { tools: [{ name: 'fz', inputSchema: '{"type":"object"}', executor: { case: 'builtin', value: { name: 'echo' } } }], replace: true }))),
];

const mutated = fc.tuple(fc.constantFrom(...SEEDS), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }), fc.nat()).map(([seed, flips, cut]) => {
  const bytes = Buffer.from(seed);
  for (const [at, value] of flips) bytes[at % bytes.length] = value;
  return cut % 3 === 0 ? bytes.subarray(0, cut % bytes.length) : bytes;
});
const anyBytes = fc.oneof(fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)), mutated, wireMessage);

test.each(METHOD_PATHS.map((m) => [m.path, m] as const))('%s: arbitrary bytes get a well-formed status', async (_path, method) => {
  const seen = new Map<grpc.status, number>();
  await fc.assert(
    fc.asyncProperty(anyBytes, async (bytes) => {
      const status = await sendRaw(client, method, bytes, method.kind === 'unary' ? undefined : STREAM_DEADLINE_MS);
      seen.set(status.code, (seen.get(status.code) ?? 0) + 1);
      return Number.isInteger(status.code) && status.code >= 0 && status.code <= 16 && typeof status.details === 'string' && status.code !== grpc.status.UNKNOWN;
    }),
    { numRuns: method.kind === 'unary' ? RUNS_UNARY : RUNS_STREAM },
  );
  expect(errors).toEqual([]);
  expect(await healthy(client)).toBe(true);
  expect(seen.size).toBeGreaterThan(0);
});

test('after the fuzzing the server still dispatches', async () => {
  const res = await app.dispatch.dispatch({ sessionId: 'after', calls: [{ id: 'c', name: 'echo', arguments: '{"ok":true}' }] });
  expect(res.results[0]!.output).toBe('{"ok":true}');
});
