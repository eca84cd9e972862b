// An IPv4 address written inside an IPv6 one (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96,
// 6to4 2002::/16, Teredo 2001::/32, ...) meets the rules of that IPv4 address too: refused at
// registration, and when the tool connects (a literal address, or one a name resolves to). The
// URL parser's other spellings of an IPv4 address (decimal, hex, octal, short) are checked as the
// address it makes of them, at both times.
//
// net.connect is wrapped so that this file dials loopback alone: the refused addresses would
// otherwise leave the host (it has an IPv6 default route) whenever the policy let one through.
import dns, { type LookupAddress } from 'node:dns';
import net from 'node:net';
import { create } from '@bufbuild/protobuf';
import { status, type ServiceError } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { Effect, ToolSpecSchema } from '../../gen/dispatch/v1/tool_pb';
import { DispatchError } from '../../src/errors';
import { createHttpExecutor, type ExecutorContext } from '../../src/executors';
import { createDestinationPolicy, createSchemaCompiler, resolveTool } from '../../src/registry';
import { json, startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

const LINK_LOCAL = 'the built-in rule 169.254.0.0/16 (link-local, cloud metadata)';
const EMBEDS = (address: string) => `, as ${address}, the IPv4 address it embeds`;

const isLoopback = (address: string) => /^(127\.|::ffff:127\.|::ffff:7f[0-9a-f]{2}:)/i.test(address) || address === '::1';
/** Addresses a connection was asked for that are not loopback: dialled by none, refused here. */
const dialled: string[] = [];
const realConnect = net.connect.bind(net) as (options: net.NetConnectOpts, listener?: () => void) => net.Socket;
type Lookup = (host: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => void;

function loopbackOnly(options: net.TcpNetConnectOpts, listener?: () => void): net.Socket {
  const host = options.host ?? 'localhost';
  if (net.isIP(host) !== 0 && !isLoopback(host)) {
    dialled.push(host);
    throw new Error(`the test refused to dial ${host}`);
  }
  const lookup = options.lookup as unknown as Lookup | undefined;
  if (!lookup) return realConnect(options, listener);
  const onlyLoopback: Lookup = (name, lookupOptions, callback) =>
    lookup(name, lookupOptions, (error, address, family) => {
      const all = typeof address === 'string' ? [address] : address.map((a) => a.address);
      const outside = all.filter((a) => !isLoopback(a));
      if (error || outside.length === 0) return callback(error, address, family);
      dialled.push(...outside);
      callback(new Error(`the test refused to dial ${outside.join(', ')}`), []);
    });
  return realConnect({ ...options, lookup: onlyLoopback as unknown as net.LookupFunction }, listener);
}

/** Test names and what they resolve to; any other name is looked up as usual. */
const NAMES: Record<string, LookupAddress[]> = {
  'nat64.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
  'sixtofour.test': [{ address: '2002:a00:1::1', family: 6 }],
  'loop.test': [{ address: '127.0.0.1', family: 4 }],
};
const realLookup = dns.lookup.bind(dns) as (host: string, options: object, callback: (...args: unknown[]) => void) => void;

let tools: ToolServer;
let open: TestDispatch;
let strict: TestDispatch;
const port = () => new URL(tools.url).port;

beforeAll(async () => {
  jest.spyOn(net, 'connect').mockImplementation(loopbackOnly as unknown as typeof net.connect);
  jest.spyOn(dns, 'lookup').mockImplementation(((host: string, options: object, callback: (...args: unknown[]) => void) => {
    const answer = NAMES[host];
    if (!answer) return realLookup(host, options, callback);
    process.nextTick(() => ((options as { all?: boolean }).all ? callback(null, answer) : callback(null, answer[0]!.address, answer[0]!.family)));
  }) as unknown as typeof dns.lookup);
  tools = await startToolServer({ '/t': json({ ok: true }) });
  open = await startDispatch('');
  strict = await startDispatch('registry:\n  http_deny: [private]\n');
});
afterAll(async () => {
  await Promise.all([open, strict].map((d) => d.close()));
  await tools.close();
  jest.restoreAllMocks();
});
afterEach(() => expect(dialled.splice(0)).toEqual([]));

const httpTool = (name: string, url: string) => ({ name, effect: Effect.READ_ONLY, inputSchema: '{"type":"object"}', executor: { case: 'http' as const, value: { url, headers: {} } } });
const refusal = (promise: Promise<unknown>) => promise.then(() => 'registered', (e: ServiceError) => ({ code: e.code, details: e.details }));

describe('at registration', () => {
  test.each([
    ['http://[::169.254.169.254]/', '[::a9fe:a9fe]'],
    ['http://[::ffff:0:a9fe:a9fe]/', '[::ffff:0:a9fe:a9fe]'],
    ['http://[64:ff9b::169.254.169.254]/', '[64:ff9b::a9fe:a9fe]'],
    ['http://[64:ff9b:1::a9fe:a9fe]/', '[64:ff9b:1::a9fe:a9fe]'],
    ['http://[2002:a9fe:a9fe::1]/', '[2002:a9fe:a9fe::1]'],
    ['http://[2001:0:4136:e378:8000:63bf:5601:5601]/', '[2001:0:4136:e378:8000:63bf:5601:5601]'],
  ])('the metadata address embedded in IPv6 (%s) is refused by the built-in rules', async (url, host) => {
    expect(await refusal(open.registry.registerTools({ tools: [httpTool('meta', url)] }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: `tools[0] ("meta"): http.url's host ${host} is denied by ${LINK_LOCAL}${EMBEDS('169.254.169.254')}`,
    });
  });

  test.each(['http://[::a00:1]/', 'http://[64:ff9b::10.0.0.1]/', 'http://[2002:a00:1::]/', 'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/'])(
    'http_deny: [private] refuses 10.0.0.1 embedded in IPv6 (%s)',
    async (url) => {
      const answer = await refusal(strict.registry.registerTools({ tools: [httpTool('internal', url)] }));
      expect(answer).toEqual({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/ is denied by registry\.http_deny "private", as 10\.0\.0\.1, the IPv4 address it embeds$/) });
    },
  );

  test.each(['http://2852039166/', 'http://0xA9FEA9FE/', 'http://0251.0376.0251.0376/', 'http://169.254.43518/', 'http://0xa9.0xfe.0xa9.0xfe/'])(
    'the URL parser makes 169.254.169.254 of %s, and that is what is checked',
    async (url) => {
      expect(await refusal(open.registry.registerTools({ tools: [httpTool('meta', url)] }))).toEqual({
        code: status.INVALID_ARGUMENT,
        details: `tools[0] ("meta"): http.url's host 169.254.169.254 is denied by ${LINK_LOCAL}`,
      });
    },
  );

  test('nothing of a refused request is registered; an IPv6 address embedding a public IPv4 one still is', async () => {
    await refusal(open.registry.registerTools({ tools: [httpTool('fine', `${tools.url}/t`), httpTool('meta', 'http://[64:ff9b::a9fe:a9fe]/')] }));
    expect((await open.registry.listTools({})).tools.map((t) => t.name)).toEqual([]);
    expect(await refusal(open.registry.registerTools({ tools: [httpTool('public', 'http://[64:ff9b::808:808]/')] }))).toBe('registered');
  });
});

describe('when the tool connects', () => {
  const compiler = createSchemaCompiler(65_536);
  const tool = (url: string) => resolveTool(create(ToolSpecSchema, { name: 't', effect: Effect.READ_ONLY, executor: { case: 'http', value: { url } } }), 'acme', compiler.compile('{"type":"object"}'));
  const context = (): ExecutorContext => {
    const signal = AbortSignal.timeout(5000);
    return { tenant: 'acme', sessionId: 's', toolCallId: 'c', attempt: 1, idempotencyKey: 'k', localKey: 'k', signal, onAbort: () => () => undefined, deadline: Date.now() + 5000, scratchDir: async () => '/tmp' };
  };
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as DispatchError);
  const noLoopback = () => createHttpExecutor({ policy: createDestinationPolicy({ httpDeny: ['loopback', 'private'] }) });

  test.each([
    ['[::7f00:1]', '::7f00:1', 'registry.http_deny "loopback"', '127.0.0.1'],
    ['[64:ff9b::7f00:1]', '64:ff9b::7f00:1', 'registry.http_deny "loopback"', '127.0.0.1'],
    ['[2002:7f00:1::]', '2002:7f00:1::', 'registry.http_deny "loopback"', '127.0.0.1'],
    ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', '2001:0:4136:e378:8000:63bf:80ff:fffe', 'registry.http_deny "loopback"', '127.0.0.1'],
    ['[::ffff:0:a00:1]', '::ffff:0:a00:1', 'registry.http_deny "private"', '10.0.0.1'],
  ])('a literal %s (a tool registered under other rules) is refused: BLOCKED, phase before, nothing dialled', async (host, address, rule, embedded) => {
    const url = `http://${host}:${port()}/t`;
    const error = await failure(noLoopback().execute(tool(url), {}, context()));
    expect(error).toBeInstanceOf(DispatchError);
    expect(error).toMatchObject({ kind: ErrorKind.BLOCKED, phase: 'before', recoverable: false });
    expect(error!.message).toBe(`dispatch refused to connect to the tool at ${url}: ${address} is denied by ${rule}${EMBEDS(embedded)}; nothing was sent`);
  });

  test.each([
    ['nat64.test', '64:ff9b::a9fe:a9fe', LINK_LOCAL, '169.254.169.254'],
    ['sixtofour.test', '2002:a00:1::1', 'registry.http_deny "private"', '10.0.0.1'],
  ])('a name that resolves to an address embedding a denied one (%s) is refused (DNS rebinding)', async (name, address, rule, embedded) => {
    const error = await failure(noLoopback().execute(tool(`http://${name}:${port()}/t`), {}, context()));
    expect(error).toMatchObject({ kind: ErrorKind.BLOCKED, phase: 'before' });
    expect(error!.message).toBe(`dispatch refused to connect to the tool at http://${name}:${port()}/t: ${address} (for ${name}) is denied by ${rule}${EMBEDS(embedded)}; nothing was sent`);
  });

  test('the other spellings of an IPv4 address are checked as the address the URL parser makes of them', async () => {
    for (const host of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1']) {
      const error = await failure(noLoopback().execute(tool(`http://${host}:${port()}/t`), {}, context()));
      expect(error?.message).toMatch(/: 127\.0\.0\.1 is denied by registry\.http_deny "loopback"; nothing was sent$/);
    }
  });

  test('with loopback allowed, the same spellings, ::ffff:127.0.0.1 and a name resolving to 127.0.0.1 reach the tool', async () => {
    const executor = createHttpExecutor({ policy: createDestinationPolicy() });
    const before = tools.count();
    for (const host of ['0x7f000001', '127.1', '[::ffff:127.0.0.1]', 'loop.test']) {
      await expect(executor.execute(tool(`http://${host}:${port()}/t`), {}, context())).resolves.toBe('{"ok":true}');
    }
    expect(tools.count()).toBe(before + 4);
  });
});
