// Two `authorization` values from real clients: Node's HTTP/2 server keeps only the first value of
// this header, so the first decides and the second is never seen (docs/security.md); grpc-js
// refuses to send two.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { describeWithPython, PYTHON } from '../e2e-python/python';
import { authYaml, startAuthApp, type AuthApp, type TestToken } from './support/auth-app';

const OWNER: TestToken = { token: 'tok-repeated-4d4d4d', tenant: 'acme', scopes: ['dispatch'] };
const GOOD = `Bearer ${OWNER.token}`;

let app: AuthApp;
beforeAll(async () => {
  app = await startAuthApp(`tools: []\n${authYaml([OWNER])}`);
});
afterAll(() => app.close());

// gRPC core (the Python examples' grpcio) sends each value as its own header field.
const PROBE = `
import sys, json, grpc
ch = grpc.insecure_channel(sys.argv[1])
list_tools = ch.unary_unary('/dispatch.v1.ToolRegistryService/ListTools', request_serializer=lambda b: b, response_deserializer=lambda b: b)
for values in json.loads(sys.argv[2]):
    try:
        list_tools(b'', metadata=[('authorization', v) for v in values], timeout=5)
        print('OK')
    except grpc.RpcError as e:
        print(e.code().name, e.details())
`;

describeWithPython('from a gRPC core client', () => {
  test('the first of two values decides; the second is never seen', async () => {
    const orders = [[GOOD, 'Bearer other'], ['Bearer other', GOOD], [GOOD, 'junk']];
    // Not spawnSync: the server answering runs in this process.
    const run = await promisify(execFile)(PYTHON, ['-c', PROBE, app.address, JSON.stringify(orders)], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(['OK', 'UNAUTHENTICATED the bearer token is not valid', 'OK']);
  });
});

const identity = (value: Buffer) => value;
const RawRegistry = grpc.makeGenericClientConstructor(
  { listTools: { path: '/dispatch.v1.ToolRegistryService/ListTools', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
  'RawRegistry',
);

test('grpc-js refuses to send two values: the call fails in the client', async () => {
  const client = new RawRegistry(app.address, grpc.credentials.createInsecure()) as unknown as { close(): void; listTools: (request: Buffer, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null) => void) => void };
  try {
    const metadata = new grpc.Metadata();
    metadata.add('authorization', GOOD);
    metadata.add('authorization', 'Bearer other');
    const error = await new Promise<grpc.ServiceError | null>((resolve) => client.listTools(Buffer.alloc(0), metadata, resolve));
    expect([error?.code, error?.details]).toEqual([grpc.status.INTERNAL, '"authorization" metadata cannot have multiple values']);
  } finally {
    client.close();
  }
});
