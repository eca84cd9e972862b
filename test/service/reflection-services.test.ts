import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import * as path from 'node:path';
import * as v1 from '../../gen/grpc/reflection/v1/reflection_pb';
import * as v1alpha from '../../gen/grpc/reflection/v1alpha/reflection_pb';
import { addService } from '../../src/server/grpc-adapter';
import { indexEnumValues, reflectedFiles } from '../../src/server/reflected-files';
import { addReflectionServices } from '../../src/server/reflection-services';

// src/server/reflection-services.ts serves reflection from gen/ instead of the library's
// addToServer (which loads reflection.proto with proto-loader for each server). The library still
// answers: each request is sent to a server of each kind, and the answers compared decoded (the
// library's protobufjs writes a field set to its default, valid_host "" and host "", which
// protobuf-es leaves out as proto3 has it; every other byte the same, file descriptors included).

// The served files, and the library's sample vendor.proto for an extension to look up.
const SAMPLE = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/sample/vendor/vendor.proto');
const reflection = new ReflectionService({ ...reflectedFiles(), ...loadSync(SAMPLE) });
indexEnumValues(reflection);

const servers: grpc.Server[] = [];
let library: string;
let ours: string;

async function listen(add: (server: grpc.Server) => void): Promise<string> {
  const server = new grpc.Server();
  add(server);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return `127.0.0.1:${port}`;
}

beforeAll(async () => {
  library = await listen((server) => reflection.addToServer(server));
  ours = await listen((server) => addReflectionServices(reflection, (definition, implementation) => addService(server, definition, implementation)));
});
afterAll(() => servers.forEach((server) => server.forceShutdown()));

type Pkg = typeof v1 | typeof v1alpha;
type Init = Parameters<typeof create<typeof v1.ServerReflectionRequestSchema>>[1];

/** The raw answers of one stream to `requests` (as bytes), sent at once, and how the stream ended. */
async function ask(address: string, pkg: Pkg, requests: readonly (Init | Buffer)[]): Promise<{ answers: Buffer[]; status: grpc.StatusObject }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const encode = (request: Init | Buffer) => (Buffer.isBuffer(request) ? request : Buffer.from(toBinary(pkg.ServerReflectionRequestSchema, create(pkg.ServerReflectionRequestSchema, request as never))));
  const name = pkg === v1 ? 'grpc.reflection.v1' : 'grpc.reflection.v1alpha';
  const stream = client.makeBidiStreamRequest(`/${name}.ServerReflection/ServerReflectionInfo`, (b: Buffer) => b, (b: Buffer) => b);
  const answers: Buffer[] = [];
  stream.on('data', (answer: Buffer) => answers.push(answer));
  const status = await new Promise<grpc.StatusObject>((resolve) => {
    stream.on('status', resolve);
    stream.on('error', () => {});
    for (const request of requests) stream.write(encode(request));
    stream.end();
  });
  client.close();
  return { answers, status };
}

const decoded = (pkg: Pkg, answers: Buffer[]) => answers.map((bytes) => fromBinary(pkg.ServerReflectionResponseSchema, bytes));

const REQUESTS: Init[] = [
  { host: 'h', messageRequest: { case: 'listServices', value: '*' } },
  { messageRequest: { case: 'listServices', value: '' } },
  { messageRequest: { case: 'fileByFilename', value: 'dispatch/v1/dispatch.proto' } },
  { messageRequest: { case: 'fileByFilename', value: 'dispatch/v1/worker.proto' } },
  { messageRequest: { case: 'fileByFilename', value: 'no/such.proto' } },
  { messageRequest: { case: 'fileContainingSymbol', value: 'dispatch.v1.DispatchService' } },
  { messageRequest: { case: 'fileContainingSymbol', value: 'dispatch.v1.DispatchService.Dispatch' } },
  { messageRequest: { case: 'fileContainingSymbol', value: 'dispatch.v1.DISPATCH_MODE_PARALLEL' } },
  { messageRequest: { case: 'fileContainingSymbol', value: 'google.rpc.RetryInfo' } },
  { messageRequest: { case: 'fileContainingSymbol', value: 'dispatch.v1.NoSuchThing' } },
  { messageRequest: { case: 'fileContainingExtension', value: { containingType: '.vendor.CommonMessage', extensionNumber: 101 } } },
  { messageRequest: { case: 'fileContainingExtension', value: { containingType: '.vendor.CommonMessage', extensionNumber: 102 } } },
  { messageRequest: { case: 'fileContainingExtension', value: {} } },
  { messageRequest: { case: 'allExtensionNumbersOfType', value: '.vendor.CommonMessage' } },
  { messageRequest: { case: 'allExtensionNumbersOfType', value: 'dispatch.v1.Event' } },
  { host: 'only-a-host' },
];

describe.each([
  ['v1', v1],
  ['v1alpha', v1alpha],
] as const)('grpc.reflection.%s', (_name, pkg) => {
  test('each request on one stream is answered as the library answered it, in order; the stream ends OK when the client ends it', async () => {
    const [theirs, mine] = await Promise.all([ask(library, pkg, REQUESTS), ask(ours, pkg, REQUESTS)]);
    expect(theirs.status.code).toBe(grpc.status.OK);
    expect(mine.status.code).toBe(grpc.status.OK);
    expect(mine.answers).toHaveLength(REQUESTS.length);
    expect(decoded(pkg, mine.answers)).toEqual(decoded(pkg, theirs.answers));
    // The answers are what was asked (not both sides empty or erroring alike).
    const answers = decoded(pkg, mine.answers).map((a) => a.messageResponse);
    const [list, files, symbols, extensions, hostOnly] = [answers.slice(0, 2), answers.slice(2, 5), answers.slice(5, 10), answers.slice(10, 15), answers[15]];
    expect(list.map((a) => a.case)).toEqual(['listServicesResponse', 'listServicesResponse']);
    expect(files.map((a) => a.case)).toEqual(['fileDescriptorResponse', 'fileDescriptorResponse', 'errorResponse']);
    expect(symbols.map((a) => a.case)).toEqual(['fileDescriptorResponse', 'fileDescriptorResponse', 'fileDescriptorResponse', 'fileDescriptorResponse', 'errorResponse']);
    expect(extensions.map((a) => a.case)).toEqual(['fileDescriptorResponse', 'errorResponse', 'errorResponse', 'allExtensionNumbersResponse', 'errorResponse']);
    expect(files[1]).toMatchObject({ value: { fileDescriptorProto: [expect.any(Uint8Array), expect.any(Uint8Array), expect.any(Uint8Array), expect.any(Uint8Array)] } });
    expect(extensions[3]).toMatchObject({ value: { baseTypeName: '.vendor.CommonMessage', extensionNumber: [101] } });
    expect(symbols[4]).toMatchObject({ value: { errorCode: grpc.status.NOT_FOUND, errorMessage: 'Symbol not found: dispatch.v1.NoSuchThing' } });
    expect(hostOnly).toMatchObject({ value: { errorCode: grpc.status.UNIMPLEMENTED } });
  });

  test('the bytes differ only by the defaults protobufjs writes', async () => {
    const [theirs, mine] = await Promise.all([ask(library, pkg, REQUESTS), ask(ours, pkg, REQUESTS)]);
    // Re-encoded by protobuf-es (which leaves out a proto3 field holding its default), the
    // library's answers are ours byte for byte: same field order, packed numbers, descriptors.
    const reencoded = decoded(pkg, theirs.answers).map((a) => Buffer.from(toBinary(pkg.ServerReflectionResponseSchema, a)));
    expect(mine.answers.map((b) => b.toString('hex'))).toEqual(reencoded.map((b) => b.toString('hex')));
    // The library's own bytes were longer by the defaults it wrote: 4 bytes (valid_host "" and the
    // echoed host "") for 13 of these 16, 8 for the empty extension request, none with a host.
    expect(theirs.answers.filter((b, i) => b.equals(mine.answers[i]!))).toHaveLength(2);
  });

  test('unknown fields of a request are dropped from its echo, as protobufjs drops them', async () => {
    // list_services "*", then field 15 (varint 1).
    const request = Buffer.from([0x3a, 0x01, 0x2a, 0x78, 0x01]);
    const [theirs, mine] = await Promise.all([ask(library, pkg, [request]), ask(ours, pkg, [request])]);
    expect(decoded(pkg, mine.answers)).toEqual(decoded(pkg, theirs.answers));
    expect(decoded(pkg, mine.answers)[0]!.originalRequest!.$unknown).toBeUndefined();
  });

  test('a request that is not protobuf ends the stream INVALID_ARGUMENT (the library: INTERNAL), after the answers before it', async () => {
    const requests = [REQUESTS[0]!, Buffer.from([0x1a, 0xff])];
    const mine = await ask(ours, pkg, requests);
    expect(mine.status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(mine.answers).toHaveLength(1);
    const theirs = await ask(library, pkg, requests);
    expect(theirs.status.code).toBe(grpc.status.INTERNAL);
  });
});
