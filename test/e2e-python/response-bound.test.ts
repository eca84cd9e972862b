import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startDispatch, type TestDispatch } from '../helpers/servers';
import { describeWithPython, finished, spawnPython } from './python';

// A gRPC client refuses a message past its receive limit, 4 MiB unless raised: Python's grpcio (the
// C core) as grpc-go. With max_message_bytes raised to 16 MiB, a turn's results were fitted to 16
// MiB, and a Python client with default options lost the whole turn (RESOURCE_EXHAUSTED "Received
// message larger than max (5400871 vs. 4194304)") after its side effects ran. They are fitted to
// max_response_bytes (4 MiB by default) instead; a deployment whose clients all receive more
// raises it with them.

jest.setTimeout(90_000);

const OUTPUT_CHARS = 900_000;
const TOOLS = `
  - name: shout
    effect: side_effect
    max_result_chars: 1000000
    input_schema: '{"type":"object","properties":{"n":{"type":"integer"},"k":{"type":"integer"}},"required":["n"]}'
    builtin: { name: shout }
`;

// A Dispatch from Python with grpc's default channel options; prints the results, or the status.
const CLIENT = `
import json, sys, grpc, dispatch_stubs
stubs = dispatch_stubs.load()
address, session, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
stub = stubs.dispatch_pb2_grpc.DispatchServiceStub(grpc.insecure_channel(address))
request = stubs.dispatch_pb2.DispatchRequest(session_id=session, calls=[stubs.dispatch_pb2.ToolCall(**c) for c in calls])
try:
    response = stub.Dispatch(request, timeout=30)
except grpc.RpcError as error:
    print(json.dumps({"code": error.code().name, "details": error.details()}))
else:
    print(json.dumps({"bytes": response.ByteSize(), "results": [{"error": r.is_error, "truncated": r.truncated, "chars": len(r.output), "ends": [r.output[:4], r.output[-3:]], "handle": r.result_handle, "warnings": list(r.warnings)} for r in response.results]}))
`;

interface PythonAnswer {
  readonly code?: string;
  readonly details?: string;
  readonly bytes?: number;
  readonly results?: { error: boolean; truncated: boolean; chars: number; ends: string[]; handle: string; warnings: string[] }[];
}

describeWithPython('a turn whose results pass 4 MiB, to clients with their default receive limit', () => {
  const stubDir = mkdtempSync(path.join(tmpdir(), 'py-stubs-'));
  const opened: TestDispatch[] = [];
  let runs = 0;
  const shout = async (args: unknown) => {
    runs++;
    return 'A'.repeat((args as { n: number }).n) + 'END';
  };
  afterAll(async () => {
    for (const d of opened) await d.close();
    rmSync(stubDir, { recursive: true, force: true });
  });
  const start = async (limits: string) => {
    const d = await startDispatch(`limits: ${limits}\ntools:${TOOLS}`, { builtins: new Map([['shout', shout]]) });
    opened.push(d);
    return d;
  };
  const calls = Array.from({ length: 6 }, (_, k) => ({ id: `c${k}`, name: 'shout', arguments: JSON.stringify({ n: OUTPUT_CHARS, k }) }));

  it('with max_message_bytes at 16 MiB, a Python client receives every result, cut with the usual warning, each whole via ReadResult', async () => {
    const d = await start('{ max_message_bytes: 16777216 }');
    runs = 0;
    const run = spawnPython(['-c', CLIENT, d.address, 'py-big', JSON.stringify(calls)], { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') });
    const { code, out } = await finished(run, 60_000);
    expect({ code, tail: out.slice(-400) }).toMatchObject({ code: 0 });
    const answer = JSON.parse(out.trim().split('\n').pop()!) as PythonAnswer;
    // Before: {"code": "RESOURCE_EXHAUSTED", "details": "Received message larger than max (5400... vs. 4194304)"}.
    expect(answer.code).toBeUndefined();
    expect(runs).toBe(6);
    expect(answer.bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(answer.results).toHaveLength(6);
    for (const result of answer.results!) {
      expect(result).toMatchObject({ error: false, truncated: true, ends: ['AAAA', 'END'] });
      expect(result.chars).toBeLessThan(OUTPUT_CHARS);
      expect(result.warnings).toEqual([expect.stringMatching(/^the result was cut to \d+ characters so that the turn's results fit in one response \(max_response_bytes\); read the rest with ReadResult$/)]);
    }
    const page = await d.dispatch.readResult({ resultHandle: answer.results![0]!.handle, offset: 0, limit: 10 });
    expect([page.text, page.totalChars]).toEqual(['AAAAAAAAAA', OUTPUT_CHARS + 3]);
  });

  it('with max_response_bytes raised with it, a client that receives 16 MiB (the TypeScript one takes 64 MiB) gets every result whole', async () => {
    const d = await start('{ max_message_bytes: 16777216, max_response_bytes: 16777216 }');
    const results = (await d.dispatch.dispatch({ sessionId: 'ts-big', calls })).results;
    expect(results.map((r) => [r.isError, r.truncated, r.output.length, r.warnings])).toEqual(calls.map(() => [false, false, OUTPUT_CHARS + 3, []]));
  });
});
