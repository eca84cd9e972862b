import { existsSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { ErrorInfoSchema } from '../../gen/google/rpc/error_details_pb';
import { StatusSchema } from '../../gen/google/rpc/status_pb';
import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import type { ServiceError } from '@grpc/grpc-js';
import { createMemoryStore, StoreUnavailableError, type Store } from '../../src/store';
import { defaultGuards } from '../../src/pipeline';
import { json, startDispatch, startToolServer, type ToolServer } from '../helpers/servers';
import { until } from '../helpers/until';

let tools: ToolServer;
let closedByClient = 0;
let writes = 0;
const big = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');

beforeAll(async () => {
  tools = await startToolServer({
    '/hang': (req, res) => void res.on('close', () => { if (!res.writableEnded) closedByClient++; }),
    '/big': (_req, res) => void res.writeHead(200).end(big),
    '/write': async (_req, res) => {
      writes++;
      await new Promise((r) => setTimeout(r, 150));
      res.writeHead(200).end('{"sent":true}');
    },
    '/fail': (_req, res) => void res.writeHead(500).end('down'),
  });
});
afterAll(() => tools.close());

const yaml = () => `
tools:
  - name: hang
    effect: read_only
    http: { url: "${tools.url}/hang" }
  - name: big
    effect: read_only
    http: { url: "${tools.url}/big" }
  - name: send
    effect: side_effect
    http: { url: "${tools.url}/write" }
  - name: fail
    effect: read_only
    retry: { max_attempts: 5, initial_backoff_ms: 1, max_backoff_ms: 2 }
    http: { url: "${tools.url}/fail" }
`;

function errorInfoReason(error: ServiceError): string | undefined {
  const raw = error.metadata.get('grpc-status-details-bin')[0];
  if (!raw) return undefined;
  const details = fromBinary(StatusSchema, raw as Buffer);
  return anyUnpack(details.details[0]!, ErrorInfoSchema)?.reason;
}

test('client cancellation aborts the executor and ends the RPC CANCELLED', async () => {
  const d = await startDispatch(yaml());
  try {
    const controller = new AbortController();
    const pending = d.dispatch.dispatch({ sessionId: 'cancel', calls: [{ id: 'c1', name: 'hang', arguments: '{}' }] }, { signal: controller.signal });
    // Cancelled once the tool has the request (a fixed 200 ms was too short once under CI's load:
    // the cancel came first, and no request was there to close).
    await until(() => tools.count('/hang') > 0 || undefined, 'the hang request at the tool');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: status.CANCELLED });
    await until(() => closedByClient > 0 || undefined, 'the tool request closed by dispatch', 2_000).catch(() => undefined);
    expect(closedByClient).toBe(1);
  } finally {
    await d.close();
  }
});

test('the RPC deadline ends the call DEADLINE_EXCEEDED', async () => {
  const d = await startDispatch(yaml());
  try {
    await expect(d.dispatch.dispatch({ sessionId: 'deadline', calls: [{ id: 'c1', name: 'hang', arguments: '{}' }] }, { deadlineMs: 300 })).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
  } finally {
    await d.close();
  }
});

test('a 100 KB result is bounded and fully readable through ReadResult', async () => {
  const d = await startDispatch(yaml());
  try {
    const { results } = await d.dispatch.dispatch({ sessionId: 'big', calls: [{ id: 'c1', name: 'big', arguments: '{}' }] });
    const result = results[0]!;
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBe(8000);
    expect(result.output).toMatch(/\n\n\.\.\. \[\d+ characters omitted by dispatch layer\] \.\.\.\n\n/);
    let text = '';
    let offset = 0;
    for (;;) {
      const page = await d.dispatch.readResult({ resultHandle: result.resultHandle, offset, limit: 30_000 });
      text += page.text;
      expect(page.totalChars).toBe(100_000);
      offset = page.nextOffset;
      if (offset === page.totalChars) break;
    }
    expect(text).toBe(big);
    await d.dispatch.endSession({ sessionId: 'big' });
    await expect(d.dispatch.readResult({ resultHandle: result.resultHandle })).rejects.toMatchObject({ code: status.NOT_FOUND });
  } finally {
    await d.close();
  }
});

test('identical side-effecting calls run once: replayed after, IN_PROGRESS during', async () => {
  const d = await startDispatch(yaml());
  try {
    writes = 0;
    const turn = (id: string) => d.dispatch.dispatch({ sessionId: 'idem', calls: [{ id, name: 'send', arguments: '{"to":"a@b.c","n":1}' }] }).then((r) => r.results[0]!);
    const [first, concurrent] = await Promise.all([turn('c1'), new Promise((r) => setTimeout(r, 50)).then(() => turn('c2'))]);
    expect(first.output).toBe('{"sent":true}');
    expect(concurrent.error?.kind).toBe(ErrorKind.IN_PROGRESS);
    const replay = await d.dispatch.dispatch({ sessionId: 'idem', calls: [{ id: 'c3', name: 'send', arguments: '{"n":1,"to":"a@b.c"}' }] }).then((r) => r.results[0]!);
    expect(replay.idempotentReplay).toBe(true);
    expect(replay.toolCallId).toBe('c3');
    expect(replay.output).toBe('{"sent":true}');
    expect(writes).toBe(1);
    await d.dispatch.endSession({ sessionId: 'idem' });
    await turn('c4');
    expect(writes).toBe(2);
  } finally {
    await d.close();
  }
});

test('more than five attempts ends the RPC ABORTED RECOVERY_EXHAUSTED', async () => {
  const alwaysRetry = defaultGuards({ reflect: () => ({ retry: true, delayMs: 1, reason: 'test' }) });
  const d = await startDispatch(yaml(), { guards: alwaysRetry });
  try {
    const before = tools.count('/fail');
    const error = await d.dispatch.dispatch({ sessionId: 'exhaust', calls: [{ id: 'c1', name: 'fail', arguments: '{}' }] }).catch((e: ServiceError) => e);
    expect((error as ServiceError).code).toBe(status.ABORTED);
    expect(errorInfoReason(error as ServiceError)).toBe('RECOVERY_EXHAUSTED');
    expect(tools.count('/fail') - before).toBe(5);
  } finally {
    await d.close();
  }
});

test('store down: side-effecting calls fail closed and are not executed; read-only calls go on', async () => {
  const real = createMemoryStore();
  const down: Store = { ...real, beginAttempt: async () => { throw new StoreUnavailableError('redis down'); }, finishAttempt: async () => { throw new StoreUnavailableError('redis down'); } };
  const d = await startDispatch(yaml(), { store: down });
  try {
    writes = 0;
    const { results } = await d.dispatch.dispatch({ sessionId: 'down', calls: [{ id: 'c1', name: 'send', arguments: '{}' }, { id: 'c2', name: 'big', arguments: '{}' }] });
    expect(results[0]!.error?.kind).toBe(ErrorKind.STORE_UNAVAILABLE);
    expect(writes).toBe(0);
    expect(results[1]!.isError).toBe(false);
  } finally {
    await d.close();
  }
});

test('the scratch directory is created on first use and removed by EndSession', async () => {
  let dir = '';
  const scratch = new Map([['scratch', async (_args: unknown, ctx: { scratchDir(): Promise<string> }) => (dir = await ctx.scratchDir())]]);
  const d = await startDispatch(`tools:\n  - name: scratch\n    effect: read_only\n    builtin: { name: scratch }\n`, { builtins: scratch });
  try {
    await d.dispatch.dispatch({ sessionId: 'scratch-s', calls: [{ id: 'c1', name: 'scratch', arguments: '{}' }] });
    expect(existsSync(dir)).toBe(true);
    await d.dispatch.endSession({ sessionId: 'scratch-s' });
    expect(existsSync(dir)).toBe(false);
    await d.dispatch.endSession({ sessionId: 'never-seen' });
  } finally {
    await d.close();
  }
});
