import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { describeWithPython, PYTHON } from '../e2e-python/python';
import { startDispatch, type TestDispatch } from '../helpers/servers';

/** What test/contract/reflection_client.py (a standard reflection client in Python) prints. */
interface Reflected {
  services: string[];
  methods: Record<string, string[]>;
  files: Record<string, string[]>;
  asked: string[];
  [message: string]: unknown;
}

function reflect(address: string): Promise<Reflected> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [path.join(__dirname, 'reflection_client.py'), address], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as Reflected);
    });
  });
}

describeWithPython('server reflection, read by a standard client', () => {
  let d: TestDispatch;
  beforeAll(async () => {
    d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
  });
  afterAll(() => d.close());

  test('lists the services and serves the real .proto files with their imports, into a fresh descriptor pool', async () => {
    const out = await reflect(d.address);
    expect(out.services).toEqual(['dispatch.v1.DispatchService', 'dispatch.v1.ToolRegistryService', 'dispatch.v1.WorkerService']);
    expect(out.methods['dispatch.v1.DispatchService']).toEqual(expect.arrayContaining(['Dispatch', 'ReadResult', 'Subscribe']));
    // Each file under its own name, importing what the .proto imports; the imports were fetched by name.
    expect(out.files['dispatch/v1/dispatch.proto']).toEqual(['google/protobuf/timestamp.proto']);
    expect(out.files['dispatch/v1/worker.proto']).toEqual(expect.arrayContaining(['dispatch/v1/dispatch.proto', 'dispatch/v1/tool.proto']));
    expect(out.files['google/rpc/status.proto']).toEqual(['google/protobuf/any.proto']);
    // Field names as the .proto writes them, types resolved across files.
    expect(out['dispatch.v1.DispatchRequest']).toMatchObject({ session_id: expect.any(Number), offered_tools: expect.any(Number) });
    expect(out['dispatch.v1.Event']).toMatchObject({ start_time: 'google.protobuf.Timestamp' });
    expect(out['dispatch.v1.ToolSpec']).toMatchObject({ input_schema: expect.any(Number) });
    expect(out['google.rpc.ErrorInfo']).toEqual({ reason: 9, domain: 9, metadata: 'google.rpc.ErrorInfo.MetadataEntry' });
    // RetryInfo beside it, with the Duration it imports.
    expect(out.files['google/rpc/error_details.proto']).toEqual(['google/protobuf/duration.proto']);
  });

  test('file_containing_symbol finds an enum value by its protobuf name, a sibling of its enum', async () => {
    const out = await reflect(d.address);
    expect(out.containing).toEqual({
      'dispatch.v1.DISPATCH_MODE_PARALLEL': 'dispatch/v1/dispatch.proto',
      'dispatch.v1.EFFECT_READ_ONLY': 'dispatch/v1/tool.proto',
      'dispatch.v1.EVENT_KIND_CALL_RECEIVED': 'dispatch/v1/dispatch.proto',
      'google.rpc.RetryInfo': 'google/rpc/error_details.proto',
      'dispatch.v1.NO_SUCH_VALUE': null,
    });
  });

  test('every dispatch.v1 file names its Go package, so that protoc-gen-go needs no M flags', async () => {
    const out = await reflect(d.address);
    const go = 'dispatch/gen/go/dispatch/v1;dispatchv1';
    expect(out.go_package).toEqual({ 'dispatch/v1/dispatch.proto': go, 'dispatch/v1/registry.proto': go, 'dispatch/v1/tool.proto': go, 'dispatch/v1/worker.proto': go });
  });
});
