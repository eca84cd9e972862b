import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import { service as healthService } from 'grpc-health-check';
import { retainedHeap } from '../helpers/heap';
import { MAX_HEALTH_WATCHES, MAX_QUEUED_REFLECTION_ANSWERS, MAX_REFLECTION_REQUEST_CHARS, MAX_REFLECTION_STREAMS } from '../../src/server/health-and-reflection';
import { startDispatch, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';

// Server reflection and health need no credentials. @grpc/reflection answers each request on a
// stream with stream.write and never waits for the client to read, each answer echoing its request:
// a client that sent requests and read nothing made the server keep all it sent. And health Watch
// and reflection streams stay open as long as the client likes. Each is bounded now.

jest.setTimeout(60_000);

const PROTO = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');
type Info = grpc.ClientDuplexStream<object, { fileDescriptorResponse?: { fileDescriptorProto: unknown[] }; errorResponse?: unknown }>;
interface ReflectionClient extends grpc.Client {
  ServerReflectionInfo(): Info;
}
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true })) as unknown as {
  grpc: { reflection: { v1: { ServerReflection: new (address: string, credentials: grpc.ChannelCredentials) => ReflectionClient } } };
};

const HealthClient = grpc.makeGenericClientConstructor(healthService, 'Health');

let d: TestDispatch;
let client: ReflectionClient;
beforeAll(async () => {
  d = await startDispatch('tools: []');
  client = new loaded.grpc.reflection.v1.ServerReflection(d.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await d.close();
});

const kept = () => retainedHeap() + process.memoryUsage().arrayBuffers;
const ask = { fileContainingSymbol: 'dispatch.v1.DispatchService' };

/** Writes `request` up to `count` times for up to `ms`, as fast as the stream takes them; how many were written. */
async function flood(stream: Info, request: object, count: number, ms: number): Promise<number> {
  const until = Date.now() + ms;
  let sent = 0;
  while (sent < count && Date.now() < until) {
    sent++;
    if (!stream.write(request)) await Promise.race([new Promise((r) => stream.once('drain', r)), new Promise((r) => setTimeout(r, until - Date.now()))]);
  }
  return sent;
}

/** The status a stream ends with, reading (and dropping) its answers. */
function ending(stream: Info): Promise<grpc.ServiceError | undefined> {
  return new Promise((resolve) => {
    stream.on('data', () => undefined);
    stream.on('error', resolve);
    stream.on('end', () => resolve(undefined));
  });
}

test('a reflection client that asks and never reads makes the server keep a bounded amount', async () => {
  // One answer read, to see its size.
  const probe = client.ServerReflectionInfo();
  const answer = await new Promise<Buffer>((resolve, reject) => {
    probe.once('data', (reply) => resolve(Buffer.from(JSON.stringify(reply))));
    probe.on('error', reject);
    probe.write(ask);
  });
  probe.end();
  expect(answer.length).toBeGreaterThan(10_000);

  const before = kept();
  // Requests of 4,000 characters (a host, which each answer echoes), as fast as the server takes
  // them for up to 2 s, none read, from another process: the server kept every answer (each
  // holding its request); now at most MAX_QUEUED_REFLECTION_ANSWERS of them.
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures/reflection-flood.js'), d.address, '20000', '4000', '2000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const sent = Number(line.toString());
    await new Promise((r) => setTimeout(r, 300));
    const grown = kept() - before;
    expect(sent).toBeGreaterThan(MAX_QUEUED_REFLECTION_ANSWERS);
    // Without the bound: 8,592 sent and 16.5 MB kept (0.3 MB with it).
    expect(grown).toBeLessThan(4 * 1024 * 1024);
  } finally {
    child.kill('SIGKILL');
  }
});

test('a reflection request longer than any name ends its stream INVALID_ARGUMENT; the next stream is answered', async () => {
  const stream = client.ServerReflectionInfo();
  const ended = ending(stream);
  // 1 MB each: before, a client that did not read made the server keep them all (80 MB in 3 s).
  await flood(stream, { ...ask, host: 'h'.repeat(1_000_000) }, 3, 2_000);
  const error = await ended;
  expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(error?.details).toContain(`${MAX_REFLECTION_REQUEST_CHARS} characters`);
  const next = client.ServerReflectionInfo();
  const reply = await new Promise<object>((resolve) => next.once('data', resolve).write(ask));
  next.end();
  expect(reply).toHaveProperty('fileDescriptorResponse');
  expect(await ending(next)).toBeUndefined();
});

/**
 * MAX_REFLECTION_STREAMS streams, each answered once (so that each is open on the server). A stream
 * of an earlier test may still count on the server for a moment (the flood's process was killed, a
 * probe ended without waiting): refused, they are all ended and opened again, for 5 s at most.
 */
async function allStreamsOpen(): Promise<Info[]> {
  for (let deadline = Date.now() + 5_000; ; ) {
    const open = Array.from({ length: MAX_REFLECTION_STREAMS }, () => client.ServerReflectionInfo());
    const answered = await Promise.all(open.map((stream) => new Promise<boolean>((resolve) => stream.once('data', () => resolve(true)).once('error', () => resolve(false)).write(ask))));
    if (answered.every(Boolean) || Date.now() > deadline) return open;
    await Promise.all(open.map((stream) => (stream.end(), ending(stream).catch(() => undefined))));
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('reflection streams open at once are bounded; one ending makes room', async () => {
  const open = await allStreamsOpen();
  const refused = client.ServerReflectionInfo();
  const error = await ending(refused);
  expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  expect(error?.details).toContain(`${MAX_REFLECTION_STREAMS} reflection streams`);
  const first = open.pop()!;
  first.end();
  expect(await ending(first)).toBeUndefined();
  const room = client.ServerReflectionInfo();
  expect(await new Promise((resolve) => room.once('data', resolve).write(ask))).toHaveProperty('fileDescriptorResponse');
  await Promise.all([room, ...open].map((stream) => (stream.end(), ending(stream))));
});

test('a reflection stream read slowly gets every answer, in order', async () => {
  const stream = client.ServerReflectionInfo();
  const symbols = Array.from({ length: 200 }, (_, i) => (i % 2 ? 'dispatch.v1.DispatchService' : 'dispatch.v1.NO_SUCH'));
  for (const symbol of symbols) stream.write({ fileContainingSymbol: symbol });
  stream.end();
  const seen: string[] = [];
  for await (const reply of stream) {
    seen.push(reply.fileDescriptorResponse ? 'file' : 'error');
    if (seen.length % 50 === 0) await new Promise((r) => setTimeout(r, 20));
  }
  expect(seen).toEqual(symbols.map((s) => (s.endsWith('Service') ? 'file' : 'error')));
});

test('health Watch streams open at once are bounded; Check still answers, and one ending makes room', async () => {
  const health = new HealthClient(d.address, grpc.credentials.createInsecure()) as unknown as { watch(request: object): grpc.ClientReadableStream<{ status: string }>; check(request: object, callback: (error: grpc.ServiceError | null, reply?: { status: string }) => void): void; close(): void };
  try {
    const first = (watch: grpc.ClientReadableStream<{ status: string }>) =>
      new Promise<string>((resolve, reject) => watch.once('data', (reply: { status: string }) => resolve(reply.status)).once('error', reject));
    const watches = Array.from({ length: MAX_HEALTH_WATCHES }, () => health.watch({ service: '' }));
    // Each has its first status, so each is open on the server.
    expect(new Set(await Promise.all(watches.map(first)))).toEqual(new Set(['SERVING']));
    for (const watch of watches) watch.on('error', () => undefined);
    const refused = await first(health.watch({ service: '' })).catch((error: grpc.ServiceError) => error);
    expect(refused).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, details: expect.stringContaining(`${MAX_HEALTH_WATCHES} health Watch streams`) });
    expect(await new Promise((resolve) => health.check({ service: '' }, (_e, reply) => resolve(reply?.status)))).toBe('SERVING');
    watches.pop()!.cancel();
    // The server hears of the cancel a moment later: a new Watch until one is admitted.
    const room = await until(async () => {
      const watch = health.watch({ service: '' });
      return (await first(watch).catch(() => undefined)) === undefined ? undefined : watch;
    }, 'room for a Watch');
    room.on('error', () => undefined);
    for (const watch of [room, ...watches]) watch.cancel();
  } finally {
    health.close();
  }
});

test('a reflection stream left open ends when the server drains, and shutdown does not wait out the grace', async () => {
  const own = await startDispatch('tools: []');
  const reflection = new loaded.grpc.reflection.v1.ServerReflection(own.address, grpc.credentials.createInsecure());
  try {
    const stream = reflection.ServerReflectionInfo();
    expect(await new Promise((resolve) => stream.once('data', resolve).write(ask))).toHaveProperty('fileDescriptorResponse');
    const ended = ending(stream);
    const started = Date.now();
    await own.server.shutdown(10_000);
    // Before: the grace, 10 s.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await ended).toBeUndefined();
  } finally {
    reflection.close();
    await own.close();
  }
});
