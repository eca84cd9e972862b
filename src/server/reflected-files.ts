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
