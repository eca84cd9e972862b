import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startApp, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';
import { readyPollsKeepBreakerClosed } from '../workers/worker-harness';
import { describeWithPython, spawnPython, type RunningPython } from './python';

// A worker id whose streams were reset twice within 10 minutes, each right after a large
// assignment, was blamed for overstating its receive limit, and a Python worker SIGKILLed twice so
// was too: its connection ended, and Node resets the streams of a connection that ends. Now only a
// reset while the connection lives counts. grpcio refusing a message resets the stream (RST_STREAM)
// and, as examples/python/worker.py does, the worker then closes its channel at once: still blamed.

jest.setTimeout(30_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${64 * MiB} }\n`;

// A worker hosting w_pay (side-effecting) whose hello says 64 MiB and whose channel receives
// argv[3] bytes (0: grpcio's default, 4 MiB). Each stream is served as worker.py does (a channel
// closed when its stream ends, then a new one); it prints "ASSIGNED <length>" and answers
// {"pod":..,"chars":..}, but holds texts starting with "hold".
const WORKER = `
import json, queue, sys, threading, time, grpc, dispatch_stubs
stubs = dispatch_stubs.load()
pb, tool_pb = stubs.worker_pb2, stubs.tool_pb2
schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
spec = tool_pb.ToolSpec(name="w_pay", description="counts", input_schema=json.dumps(schema), effect=tool_pb.EFFECT_SIDE_EFFECT)
address, pod, receives = sys.argv[1], sys.argv[2], int(sys.argv[3])
options = [("grpc.max_receive_message_length", receives)] if receives else []
def serve():
    outbox, done = queue.Queue(), threading.Event()
    outbox.put(pb.WorkerMessage(hello=pb.Hello(worker_id="ocr", tools=[spec], max_receive_message_bytes=64 * 1024 * 1024)))
    def outgoing():
        while (m := outbox.get()) is not None:
            yield m
    def beat():
        while not done.wait(0.2):
            outbox.put(pb.WorkerMessage(heartbeat=pb.Heartbeat()))
    threading.Thread(target=beat, daemon=True).start()
    with grpc.insecure_channel(address, options=options) as channel:
        try:
            for a in stubs.worker_pb2_grpc.WorkerServiceStub(channel).Work(outgoing()):
                if a.cancel:
                    continue
                text = json.loads(a.call.arguments)["text"]
                print(f"ASSIGNED {len(text)}", flush=True)
                if not text.startswith("hold"):
                    outbox.put(pb.WorkerMessage(completion=pb.Completion(assignment_id=a.assignment_id, output=json.dumps({"pod": pod, "chars": len(text)}, separators=(",", ":")))))
        except grpc.RpcError as error:
            print(f"ENDED {error.code().name}", flush=True)
        finally:
            done.set()
            outbox.put(None)
while True:
    serve()
    time.sleep(0.05)
`;

describeWithPython('a Python worker killed, or refusing a large assignment, right after one was sent', () => {
  const stubs = mkdtempSync(path.join(tmpdir(), 'py-crash-stubs-'));
  const env = { DISPATCH_PY_STUBS: path.join(stubs, 'stubs') };
  let t: TestDispatch;
  let workers: RunningPython[] = [];
  beforeEach(async () => {
    t = await startApp(LIMITS + readyPollsKeepBreakerClosed('w_pay'));
    workers = [];
  });
  afterEach(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await t.close();
  });
  afterAll(() => rmSync(stubs, { recursive: true, force: true }));

  const call = async (session: string, text: string) => {
    const { results } = await t.dispatch.dispatch({ sessionId: session, calls: [{ id: 'c', name: 'w_pay', arguments: JSON.stringify({ text }) }] });
    return results[0]!;
  };
  /** Starts a worker answering as `pod`; resolves once it took a small call. */
  let tries = 0;
  const pod = async (name: string, receives: number) => {
    const w = spawnPython(['-c', WORKER, t.address, name, String(receives)], env);
    workers.push(w);
    await until(
      async () => {
        if (w.child.exitCode !== null) throw new Error(`the Python worker exited: ${w.out()}`);
        return (await call(`ready-${++tries}`, `ready ${tries}`)).output.startsWith(`{"pod":"${name}"`) || undefined;
      },
      `pod ${name} to take calls`,
      20_000,
    );
    return w;
  };
  const HELD = `hold${'a'.repeat(5_000_000)}`;
  const DISCONNECTED = 'worker "ocr" hosting "w_pay" disconnected while running the call';

  it('a worker SIGKILLed twice, each time just as a large call reached it, is not blamed: its id, back, takes large calls', async () => {
    for (const name of ['a', 'b']) {
      const w = await pod(name, 64 * MiB);
      // Other arguments each time (as long): the second worker to stop under the same arguments
      // would keep them out (test/workers/poison-call.test.ts), which is not what this looks at.
      const big = call(`s-${name}`, `hold${name}${'a'.repeat(4_999_999)}`);
      await until(() => w.out().includes(`ASSIGNED ${HELD.length}\n`) || undefined, 'the large call to reach the worker', 10_000);
      w.child.kill('SIGKILL');
      expect((await big).error?.message).toBe(DISCONNECTED);
    }
    await pod('c', 64 * MiB);
    expect(await call('s-c', 'a'.repeat(5_000_000))).toMatchObject({ isError: false, output: '{"pod":"c","chars":5000000}' });
  });

  it('a worker whose grpcio refuses a large assignment, closing its channel right after, is blamed the second time', async () => {
    const w = await pod('liar', 0);
    expect((await call('s0', HELD)).error?.message).toBe(DISCONNECTED);
    await until(() => (w.out().match(/ENDED RESOURCE_EXHAUSTED/g)?.length === 1 ? true : undefined), 'the worker to see its stream refused', 10_000);
    // It reconnects by itself: wait for it to take a call again.
    await until(async () => (await call(`back-${++tries}`, 'x')).output === '{"pod":"liar","chars":1}' || undefined, 'the worker to reconnect', 10_000);
    expect((await call('s1', HELD)).error?.message).toMatch(/^worker "ocr" hosting "w_pay" dropped its stream just after it was sent this call's assignment of 50001\d\d bytes, the second time within 10 minutes/);
    expect(w.out()).not.toContain(`ASSIGNED ${HELD.length}`);
  });
});
