import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { GenMessage, GenService } from '@bufbuild/protobuf/codegenv2';
import type * as grpc from '@grpc/grpc-js';
import type { ReflectionService } from '@grpc/reflection';
import * as v1 from '../../gen/grpc/reflection/v1/reflection_pb';
import * as v1alpha from '../../gen/grpc/reflection/v1alpha/reflection_pb';
import { serviceDefinition } from './grpc-adapter';

// @grpc/reflection's addToServer loads its reflection.proto with proto-loader (v1 and v1alpha) for
// every server it is added to: 1.7-4.5 ms of CPU per server once warm (~19 ms the first time in a
// process); and under jest (one compiled copy of each module per worker,
// scripts/jest-script-runtime.js) ~6.4 MB of heap kept per test file that built an app (57 to
// 135-154 MB over 16 such files, ~71 MB without it), so workers passed workerIdleMemoryLimit and
// were replaced every 11-19 files. Here the same services are served from the protos compiled
// into gen/ (proto/grpc/reflection/, copies of the library's own), and the library still answers
// each request: its handleServerReflectionRequest reads and returns the plain objects proto-loader
// makes with the library's options (camelCase fields, defaults, `oneofs`), which the codecs below
// convert from and to. The answers decode as the library's did (protobufjs also wrote the empty
// valid_host and host, which proto3 leaves out); a request that is not protobuf, or holds invalid
// UTF-8, is refused INVALID_ARGUMENT as on dispatch's own services (the library: INTERNAL, or
// read leniently); of a oneof sent twice, the last on the wire counts, as protobuf has it (the
// library: the last declared). test/service/reflection-services.test.ts compares the answers with
// addToServer's.

/** What each of the library's implementations (v1, v1alpha) answers a request with. */
interface Answerer {
  handleServerReflectionRequest(request: PlainRequest): PlainResponse;
}

/** A ServerReflectionRequest as proto-loader decodes it: the set oneof field, and its name in `messageRequest`. */
interface PlainRequest {
  host: string;
  messageRequest?: string;
  fileByFilename?: string;
  fileContainingSymbol?: string;
  fileContainingExtension?: { containingType: string; extensionNumber: number };
  allExtensionNumbersOfType?: string;
  listServices?: string;
}

/** A ServerReflectionResponse as the library builds it: the request echoed, and one answer. */
interface PlainResponse {
  validHost?: string;
  originalRequest?: PlainRequest;
  fileDescriptorResponse?: { fileDescriptorProto?: Uint8Array[] };
  allExtensionNumbersResponse?: { baseTypeName?: string; extensionNumber?: number[] };
  listServicesResponse?: { service?: { name?: string }[] };
  errorResponse?: { errorCode?: number; errorMessage?: string };
}

/** The generated schemas of one package (v1 and v1alpha declare the same messages). */
interface Package {
  readonly ServerReflection: GenService<never>;
  readonly ServerReflectionRequestSchema: GenMessage<v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest>;
  readonly ServerReflectionResponseSchema: GenMessage<v1.ServerReflectionResponse | v1alpha.ServerReflectionResponse>;
}

const REQUESTS = ['fileByFilename', 'fileContainingSymbol', 'fileContainingExtension', 'allExtensionNumbersOfType', 'listServices'] as const;
const ANSWERS = ['fileDescriptorResponse', 'allExtensionNumbersResponse', 'listServicesResponse', 'errorResponse'] as const;

/** The request as proto-loader gave it to the library: only the oneof's set field, keys in the same order. */
function plainRequest(request: v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest): PlainRequest {
  const plain: PlainRequest = { host: request.host };
  const { case: field, value } = request.messageRequest;
  if (field === undefined) return plain;
  if (field === 'fileContainingExtension') {
    const extension = value as v1.ExtensionRequest;
    plain.fileContainingExtension = { containingType: extension.containingType, extensionNumber: extension.extensionNumber };
  } else plain[field] = value as string;
  plain.messageRequest = field;
  return plain;
}

/** The library's answer as a generated message: the first of its answers set (it sets one). */
function response(pkg: Package, plain: PlainResponse): Uint8Array {
  const echoed = plain.originalRequest ?? { host: '' };
  const field = REQUESTS.find((name) => echoed[name] !== undefined);
  const answer = ANSWERS.find((name) => plain[name] !== undefined);
  const message = create(pkg.ServerReflectionResponseSchema, {
    validHost: plain.validHost ?? '',
    originalRequest: { host: echoed.host ?? '', messageRequest: field === undefined ? { case: undefined } : { case: field, value: echoed[field] } },
    messageResponse: answer === undefined ? { case: undefined } : { case: answer, value: plain[answer] },
  } as never);
  return toBinary(pkg.ServerReflectionResponseSchema, message);
}

/** The grpc-js definition of one package's ServerReflection, its codec protobuf-es's, its messages the library's. */
function definition(pkg: Package): grpc.ServiceDefinition {
  return serviceDefinition(pkg.ServerReflection, {
    serverReflectionInfo: {
      decodeRequest: (bytes) => plainRequest(fromBinary(pkg.ServerReflectionRequestSchema, bytes)),
      encodeResponse: ((plain: PlainResponse) => Buffer.from(response(pkg, plain))) as (value: never) => Buffer,
    },
  });
}

/**
 * The two services as the library's addToServer adds them (`grpc.reflection.v1` and `v1alpha`),
 * each stream's requests answered in order and the stream ended when the client ends it, with no
 * proto loaded: passed to `add` as definition and handlers, for grpc-adapter's addService (which
 * answers a request protobuf-es cannot read INVALID_ARGUMENT before the library sees it). Throws
 * if `reflection` no longer holds its implementations where @grpc/reflection 1.0 does.
 */
export function addReflectionServices(reflection: ReflectionService, add: (definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) => void): void {
  const { v1: answersV1, v1Alpha: answersV1alpha } = reflection as unknown as { v1?: Answerer; v1Alpha?: Answerer };
  for (const [pkg, answerer] of [
    [v1, answersV1],
    [v1alpha, answersV1alpha],
  ] as const) {
    if (typeof answerer?.handleServerReflectionRequest !== 'function') throw new Error('@grpc/reflection: ReflectionService holds no v1 or v1Alpha implementation');
    // The library's own handler (reflection-v1.js's addToServer), which grpc-js's decoded messages reach.
    const info = (stream: grpc.ServerDuplexStream<PlainRequest, PlainResponse>) => {
      stream.on('end', () => stream.end());
      stream.on('data', (request: PlainRequest) => stream.write(answerer.handleServerReflectionRequest(request)));
    };
    add(definition(pkg as unknown as Package), { serverReflectionInfo: info as grpc.UntypedHandleCall });
  }
}
