import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startApp, type TestDispatch } from '../helpers/servers';
import { until } from '../helpers/until';
import { describeWithPython, runPython, spawnPython, type RunningPython } from './python';

// grpcio (the C core) receives 4 MiB unless raised. With limits.max_argument_bytes at 6 MiB, a call
// of 5 MB of arguments was sent to a Python worker of default channel options: grpcio refused it
// ("Received message larger than max (5000194 vs. 4194304)"), the stream ended, the call failed and
// the worker reconnected. An assignment past what the worker receives (its hello's
// max_receive_message_bytes, else what limits.worker_receive_bytes assumes) is now refused INVALID_ARGUMENTS,
// before anything is sent; the worker stays connected. worker.py says its 64 MiB in its hello.

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const LIMITS = `limits: { max_argument_bytes: ${6 * MiB}, max_message_bytes: ${16 * MiB} }\n`;

// A worker with grpc's default channel options whose hello says nothing of its receive limit;
// prints each assignment's length and how its stream ended.
const PLAIN_WORKER = `
import json, queue, sys, threading, time, grpc, dispatch_stubs
stubs = dispatch_stubs.load()
pb, tool_pb = stubs.worker_pb2, stubs.tool_pb2
outbox = queue.Queue()
schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
spec = tool_pb.ToolSpec(name="py_len", description="length", input_schema=json.dumps(schema), effect=tool_pb.EFFECT_READ_ONLY)
outbox.put(pb.WorkerMessage(hello=pb.Hello(worker_id="py-plain", tools=[spec])))
def outgoing():
    while True:
        yield outbox.get()
def beat():
    while True:
        time.sleep(1)
        outbox.put(pb.WorkerMessage(heartbeat=pb.Heartbeat()))
threading.Thread(target=beat, daemon=True).start()
stream = stubs.worker_pb2_grpc.WorkerServiceStub(grpc.insecure_channel(sys.argv[1])).Work(outgoing())
try:
    for a in stream:
        if a.cancel:
            continue
        n = len(json.loads(a.call.arguments)["text"])
        print(f"assigned {n}", flush=True)
        outbox.put(pb.WorkerMessage(completion=pb.Completion(assignment_id=a.assignment_id, output=json.dumps({"chars": n}))))
    print("stream ended OK", flush=True)
except grpc.RpcError as error:
    print(f"stream ended {error.code().name}: {error.details()}", flush=True)
`;

describeWithPython('a Python worker and assignments past what it receives', () => {
  const stubs = mkdtempSync(path.join(tmpdir(), 'py-asz-stubs-'));
  const env = { DISPATCH_PY_STUBS: path.join(stubs, 'stubs') };
  let t: TestDispatch;
  let worker: RunningPython | undefined;
  beforeEach(async () => {
    t = await startApp(LIMITS);
  });
  afterEach(async () => {
    worker?.child.kill('SIGKILL');
    if (worker) await worker.exited;
    worker = undefined;
    await t.close();
  });
  afterAll(() => rmSync(stubs, { recursive: true, force: true }));

  const registered = async (tool: string) =>
    until(async () => {
      if (worker!.child.exitCode !== null) throw new Error(`the Python worker exited: ${worker!.out()}`);
      return (await t.registry.listTools({})).tools.some((x) => x.name === tool) || undefined;
    }, 'the Python worker to register', 20_000);
  const call = async (tool: string, chars: number) => {
    const text = 'a '.repeat(chars / 2);
    const { results } = await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${chars}`, name: tool, arguments: JSON.stringify({ text }) }] });
    return results[0]!;
  };

  it('a worker of default channel options is not sent a 5 MB call: refused naming the sizes and the bound; it serves the next call', async () => {
    worker = spawnPython(['-c', PLAIN_WORKER, t.address], env);
    await registered('py_len');
    const big = await call('py_len', 5_000_000);
    expect(big.error?.kind).toBe(ErrorKind.INVALID_ARGUMENTS);
    expect(big.error?.message).toMatch(
      /^arguments are 5000011 bytes: the assignment carrying them would be 50001\d\d bytes, over the 4194304 bytes \(4 MiB\) that worker "py-plain" hosting "py_len" is ASSUMED to receive \(limits\.worker_receive_bytes, as its hello does not say max_receive_message_bytes\); it was not sent/,
    );
    expect(big.error?.message).not.toContain('no worker is connected');
    expect(await call('py_len', 10)).toMatchObject({ isError: false, output: '{"chars": 10}' });
    expect(worker.out()).toBe('assigned 10\n');
  });

  it('worker.py, whose hello says its 64 MiB, is sent the 5 MB call', async () => {
    worker = runPython('worker.py', ['--address', t.address, '--id', 'py-big'], env);
    await registered('py_word_count');
    expect(await call('py_word_count', 5_000_000)).toMatchObject({ isError: false, output: '{"words": 2500000, "longest": "a"}' });
    expect(worker.out()).not.toContain('stream ended');
  });
});
