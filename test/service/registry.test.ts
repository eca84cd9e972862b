import { status } from '@grpc/grpc-js';
import * as grpc from '@grpc/grpc-js';
import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { startDispatch, type TestDispatch } from '../helpers/servers';

let d: TestDispatch;
beforeAll(async () => {
  d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
});
afterAll(() => d.close());

const spec = (name: string, extra: object = {}) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'builtin' as const, value: { name: 'echo' } }, ...extra });

test('RegisterTools adds tools that Dispatch and ListTools then see; RemoveTool removes them', async () => {
  await expect(d.registry.registerTools({ tools: [spec('echo2')] })).resolves.toMatchObject({ registered: 1 });
  const { tools } = await d.registry.listTools({});
  expect(tools.map((t) => t.name)).toEqual(['echo', 'echo2']);
  const { results } = await d.dispatch.dispatch({ sessionId: 'r', calls: [{ id: 'c', name: 'echo2', arguments: '{"x":1}' }] });
  expect(results[0]!.output).toBe('{"x":1}');
  await expect(d.registry.removeTool({ name: 'echo2' })).resolves.toMatchObject({ removed: true });
  await expect(d.registry.removeTool({ name: 'echo2' })).resolves.toMatchObject({ removed: false });
});

test.each([
  [[spec('bad', { inputSchema: '{"type":"objekt"}' })], /^tools\[0\] \("bad"\): input_schema does not compile: schema is invalid: data\/type must be equal to one of the allowed values/],
  [[spec('bad', { inputSchema: '{"$ref":"https://example.com/s.json"}' })], /^tools\[0\] \("bad"\): input_schema does not compile: can't resolve reference https:\/\/example.com\/s.json/],
  [[spec('bad', { inputSchema: '{not json' })], /^tools\[0\] \("bad"\): input_schema is not valid JSON/],
  [[spec('bad', { executor: { case: undefined } })], /^tools\[0\]: tool "bad" has no executor \(one of http, worker, mcp, builtin\)$/],
  [[spec('bad', { executor: { case: 'mcp', value: { server: 's', tool: 't' } } })], /^tools\[0\]: tool "bad": executor "mcp" is not available on this server$/],
  [[spec('dup'), spec('dup')], /^tools\[1\]: duplicate tool name "dup" in one request$/],
  [[spec('bad name!')], /^tools\[0\]: name "bad name!" must be 1-128 characters/],
  [[spec('bad', { resourceKey: 'path' })], /^tools\[0\]: tool "bad": resource_key "path" is not a JSON pointer$/],
])('a bad ToolSpec is INVALID_ARGUMENT with a precise message (%#)', async (tools, message) => {
  const error = await d.registry.registerTools({ tools }).catch((e: grpc.ServiceError) => e);
  expect(error).toMatchObject({ code: status.INVALID_ARGUMENT });
  expect((error as grpc.ServiceError).details).toMatch(message);
});

test('an existing name is ALREADY_EXISTS unless replace is set', async () => {
  await d.registry.registerTools({ tools: [spec('twice')] });
  await expect(d.registry.registerTools({ tools: [spec('twice')] })).rejects.toMatchObject({ code: status.ALREADY_EXISTS });
  await expect(d.registry.registerTools({ tools: [spec('twice', { description: 'v2' })], replace: true })).resolves.toMatchObject({ registered: 1 });
});

test('health reports SERVING for the service and "" once tools are loaded', async () => {
  const { HealthImplementation, service } = require('grpc-health-check') as typeof import('grpc-health-check');
  void HealthImplementation;
  const Client = grpc.makeGenericClientConstructor(service, 'Health');
  const client = new Client(d.address, grpc.credentials.createInsecure()) as unknown as { check(req: object, cb: (e: Error | null, r: { status: string }) => void): void; close(): void };
  for (const name of ['', 'dispatch.v1.DispatchService']) {
    const reply = await new Promise<{ status: string }>((resolve, reject) => client.check({ service: name }, (e, r) => (e ? reject(e) : resolve(r))));
    expect(reply.status).toBe('SERVING');
  }
  client.close();
});

test('server reflection lists the dispatch services', async () => {
  const { loadSync } = require('@grpc/proto-loader') as typeof import('@grpc/proto-loader');
  const path = require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
  const pkg = grpc.loadPackageDefinition(loadSync(path)) as unknown as { grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } } };
  const client = new pkg.grpc.reflection.v1.ServerReflection(d.address, grpc.credentials.createInsecure());
  const stream = (client as unknown as { serverReflectionInfo(): grpc.ClientDuplexStream<object, { listServicesResponse?: { service: { name: string }[] } }> }).serverReflectionInfo();
  const reply = await new Promise<{ listServicesResponse?: { service: { name: string }[] } }>((resolve, reject) => {
    stream.on('data', resolve);
    stream.on('error', reject);
    stream.write({ listServices: '' });
  });
  stream.end();
  client.close();
  expect(reply.listServicesResponse?.service.map((s) => s.name)).toEqual(expect.arrayContaining(['dispatch.v1.DispatchService', 'dispatch.v1.ToolRegistryService', 'dispatch.v1.WorkerService']));
});
