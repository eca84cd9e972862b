// `--address dns://SERVER/HOST:PORT` names the DNS server to resolve HOST with. grpc-js hands SERVER
// to Node's Resolver.setServers, which takes IP addresses only and throws on a name: the channel's
// constructor threw, outside any handler, and dispatchctl printed Node's stack trace and exited 1;
// port 0 failed an assertion in c-ares, and the process aborted (SIGABRT, exit 134).
// Such an address is now a usage error (2) naming it; an IP server still works. The compiled CLI
// (`npm run build` first) against a real server on port 0.
import { resolveConnection } from '../../src/cli/dispatchctl-connection';
import { runDispatchctl } from '../helpers/dispatchctl';
import { startDispatch, type TestDispatch } from '../helpers/servers';

jest.setTimeout(30_000);

let d: TestDispatch;
let port: string;
beforeAll(async () => {
  d = await startDispatch('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
  port = d.address.split(':').pop()!;
});
afterAll(() => d.close());

test.each(['ns1.example.com', 'ns1.example.com:53', '[', 'a b', '[::1', '127.0.0.1:0'])('a DNS server %j Node cannot take is a usage error, not a stack trace or an abort', async (server) => {
  for (const command of [['tools', 'list'], ['events']]) {
    const address = `dns://${server}/localhost:${port}`;
    const run = await runDispatchctl(['--address', address, ...command]);
    expect(run).toEqual({
      code: 2,
      out: '',
      err: `dispatchctl: --address: the DNS server of dns://SERVER/HOST:PORT must be an IP address, with a :PORT from 1 to 65535 or none ([IPv6]:PORT); got ${JSON.stringify(address)}\n`,
    });
  }
  expect(() => resolveConnection({}, { DISPATCH_ADDRESS: `dns://${server}/localhost:1` })).toThrow('DISPATCH_ADDRESS: the DNS server of dns://SERVER/HOST:PORT must be an IP address');
});

test('a DNS server given by IP, with or without a port, and none at all, are taken', async () => {
  for (const server of ['127.0.0.53', '127.0.0.53:53', '[::1]:53', '::1', '']) {
    const address = `dns://${server}/localhost:1`;
    expect(resolveConnection({ address }, {}).address).toBe(address);
  }
  const run = await runDispatchctl(['--address', `dns:///localhost:${port}`, 'call', 'echo', '{"n":1}']);
  expect(run).toMatchObject({ code: 0, err: '' });
});
