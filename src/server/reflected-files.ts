import { toBinary, type DescFile } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { PackageDefinition } from '@grpc/proto-loader';
import { file_dispatch_v1_dispatch } from '../../gen/dispatch/v1/dispatch_pb';
import { file_dispatch_v1_registry } from '../../gen/dispatch/v1/registry_pb';
import { file_dispatch_v1_worker } from '../../gen/dispatch/v1/worker_pb';
import { file_google_rpc_error_details } from '../../gen/google/rpc/error_details_pb';
import { file_google_rpc_status } from '../../gen/google/rpc/status_pb';

/** The files served: the three with services, and google.rpc's, which a client decodes error details with. */
const SERVED: readonly DescFile[] = [file_dispatch_v1_dispatch, file_dispatch_v1_registry, file_dispatch_v1_worker, file_google_rpc_status, file_google_rpc_error_details];

/** `files` and everything they import, each once. */
function withImports(files: readonly DescFile[]): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile): void => {
    if (seen.has(file.proto.name)) return;
    seen.set(file.proto.name, file);
    file.dependencies.forEach(visit);
  };
  files.forEach(visit);
  return [...seen.values()];
}

/**
 * What @grpc/reflection reads from a proto-loader package definition (each entry's
 * `fileDescriptorProtos`), holding the real FileDescriptorProtos compiled into gen/: each .proto
 * under its own name ("dispatch/v1/dispatch.proto"), its imports (google/protobuf/timestamp.proto)
 * served too, and its field names as written (session_id). Loaded through proto-loader instead,
 * reflection served one made-up "dispatch_v1.proto" without its imports and with camelCase
 * fields, which a standard client's descriptor pool rejects.
 */
export function reflectedFiles(): PackageDefinition {
  const fileDescriptorProtos = withImports(SERVED).map((file) => Buffer.from(toBinary(FileDescriptorProtoSchema, file.proto)));
  return { 'dispatch.v1': { format: 'Protocol Buffer 3 DescriptorProto', type: {}, fileDescriptorProtos } } as unknown as PackageDefinition;
}

/** The parts of a FileDescriptorProto, as @grpc/reflection decodes it, that declare enums. */
interface EnumScope {
  readonly name?: string;
  readonly enumType?: readonly { readonly value?: readonly { readonly name?: string }[] }[];
  readonly nestedType?: readonly EnumScope[];
}
/** What each of @grpc/reflection's implementations (v1, v1alpha) holds: its files by name, and the file declaring each symbol. */
interface SymbolIndex {
  readonly files: Record<string, { readonly package?: string; readonly enumType?: EnumScope['enumType']; readonly messageType?: readonly EnumScope[] }>;
  readonly symbols: Record<string, unknown>;
}

/**
 * Indexes each enum value under its protobuf full name, a sibling of its enum
 * (`dispatch.v1.DISPATCH_MODE_PARALLEL`; protobuf scopes enum values as C++ does, and every
 * descriptor pool, protoc's and Python's, names them so), in both of `service`'s implementations,
 * so that file_containing_symbol finds it: `grpcurl describe` of a value, or a client's descriptor
 * database asking for one. @grpc/reflection 1.0 indexes a value only as a child of its enum
 * (`dispatch.v1.DispatchMode.DISPATCH_MODE_PARALLEL`), which no client asks for; that name is
 * kept. Returns how many names were added: 0 if the library's index is not where it was.
 */
export function indexEnumValues(service: object): number {
  let added = 0;
  for (const index of Object.values(service as Record<string, Partial<SymbolIndex> | undefined>)) {
    if (typeof index?.files !== 'object' || typeof index.symbols !== 'object') continue;
    const symbols = index.symbols;
    for (const file of Object.values(index.files)) {
      const visit = (scope: string, enums: EnumScope['enumType'] = [], messages: readonly EnumScope[] = []): void => {
        for (const value of enums.flatMap((e) => e.value ?? [])) {
          const name = `${scope}.${value.name ?? ''}`;
          if (symbols[name] === undefined) (symbols[name] = file), added++;
        }
        for (const message of messages) visit(`${scope}.${message.name ?? ''}`, message.enumType, message.nestedType);
      };
      visit(file.package ?? '', file.enumType, file.messageType);
    }
  }
  return added;
}
