// examples/typescript as an agent loop would copy them: one session across the turns (the backend
// ended the session after every turn, so no loop was ever seen), gRPC's retry policy on
// OVERLOADED, the hard error's ErrorInfo reason, retry_after_ms waited, warnings, truncated results
// read whole, ParseToolCalls, a clear message for bad calls, and a worker that stops when its
// tool's name is taken (it reconnected for ever, saying "hosting" each time).
import { status, type ServiceError } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describeHardError, parseCalls, runConversation, type ModelCall } from '../../examples/typescript/backend';
import { keepWorking } from '../../examples/typescript/worker';
import { startApp } from '../helpers/servers';
import { turnInFlight } from '../helpers/turn-in-flight';

jest.setTimeout(30_000);

const EXAMPLE_TOOLS = readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8');
const echoTool = (name: string, extra = '') => `  - name: ${name}\n    effect: read_only\n    skip_memoize: true\n    input_schema: '{"type":"object"}'\n${extra}    builtin: { name: echo }\n`;
const CONFIG = `${EXAMPLE_TOOLS}${echoTool('poll')}${echoTool('limited', '    retry: { max_backoff_ms: 100 }\n')}
policies:
  - match: limited
    rate: { per_second: 0.5, burst: 1, wait_ms: 0 }
limits:
  max_turns_in_flight: 1
`;
const call = (id: string, name: string, args: unknown): ModelCall => ({ id, name, arguments: JSON.stringify(args) });

describe('the TypeScript backend in an agent loop', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    t = await startApp(CONFIG);
  });
  afterAll(() => t.close());

  test('keeps one session across the turns: a model polling the same job is stopped LOOP_DETECTED, the reason decoded', async () => {
    const printed: string[] = [];
    const turns = Array.from({ length: 12 }, (_, i) => [call(`p${i + 1}`, 'poll', { job: 7 })]);
    const error = (await runConversation(t.address, turns, undefined, (line) => printed.push(line)).catch((e: unknown) => e)) as ServiceError;
    expect(error.code).toBe(status.ABORTED);
    expect(describeHardError(error)).toMatch(/^ABORTED LOOP_DETECTED: loop detected: poll returned the same result the last 10 times it was called with the same input/);
    expect(printed.at(-1)).toBe('-- turn 11');
  });

  test('retries a turn refused OVERLOADED (the one turn in flight taken) until it gets in', async () => {
    const holder = await turnInFlight(t, 'holder', 600);
    const refused = await t.dispatch.dispatch({ sessionId: 'direct', calls: [call('d', 'echo', {})] }).catch((e: ServiceError) => describeHardError(e));
    expect(refused).toMatch(/^RESOURCE_EXHAUSTED OVERLOADED: /);
    expect(await runConversation(t.address, [[call('e', 'echo', { n: 1 })]])).toEqual(['e ok tool=echo attempts=1: {"n":1}']);
    expect((await holder.done).results[0]!.isError).toBe(false);
  });

  test('waits retry_after_ms before the next turn, so the call the model makes again gets through', async () => {
    const lines = await runConversation(t.address, [[call('a', 'limited', {}), call('b', 'limited', {})], [call('c', 'limited', {})]]);
    expect(lines[2]).toMatch(/^b error UNAVAILABLE tool=limited attempts=1: .*is at its rate limit of 0.5 calls per second/);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}retry_after_ms: \d{4}$/));
    expect(lines.slice(-2)).toEqual(['-- turn 2', 'c ok tool=limited attempts=1: {}']);
  });

  test('shows warnings, reads a truncated result whole with ReadResult, and parses tool calls out of a model text', async () => {
    const lines = await runConversation(t.address, [[call('s', 'sleep', { ms: '10' }), call('e', 'echo', { t: 'x'.repeat(20_000) })], { text: 'Let me check. <tool_call>{"name": "echo", "arguments": {"a": 1}}</tool_call>' }]);
    expect(lines.slice(1, 3)).toEqual(['s ok tool=sleep attempts=1: {"ms":10}', '  warning: repaired /ms: "10" -> 10 (string to number)']);
    expect(lines).toContain('  truncated: 20008 characters in all, read with ReadResult');
    expect(lines.at(-1)).toMatch(/^\S+ ok tool=echo attempts=1: \{"a":1\}$/);
  });

  test('says what is wrong with bad calls', () => {
    expect(() => parseCalls('[{"id": "a", "nme": "echo"}]')).toThrow('call 0 needs name, arguments as strings (arguments is the JSON text the model emitted), got {"id":"a","nme":"echo"}');
    expect(() => parseCalls('{"id": "a"}')).toThrow('calls must be a JSON list of {"id", "name", "arguments"}');
    expect(() => parseCalls('[{')).toThrow(/^calls are not JSON \(/);
  });
});

test("the TypeScript worker stops with the server's message when its tool's name is taken (ALREADY_EXISTS), never saying it hosts", async () => {
  const t = await startApp(`${EXAMPLE_TOOLS}${echoTool('ts_reverse')}`);
  const log: string[] = [];
  const worker = keepWorking({ address: t.address, initialBackoffMs: 10, maxBackoffMs: 50, log: (line) => log.push(line) });
  try {
    const ended = await Promise.race([worker.done, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000))]);
    expect(ended).toMatchObject({ code: status.ALREADY_EXISTS, details: expect.stringContaining('tool "ts_reverse" is the operator\'s') });
    expect(log).toEqual([]);
  } finally {
    worker.stop();
    await worker.done;
    await t.close();
  }
});
