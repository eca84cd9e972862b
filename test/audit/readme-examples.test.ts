// README's examples and stated defaults, held to what the service does: the tool file example
// loads and its comments' defaults are the code's, the error JSON a model sees is a read-only
// tool's timeout as README shows it, the limits its Security section names are the defaults, and
// a Subscribe filtered by tool receives TURN_END when it names the empty tool "".
import { readFileSync } from 'node:fs';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { parseConfig } from '../../src/config';
import { DEFAULT_LIMITS, TOOL_DEFAULTS } from '../../src/options';
import { describe as seq, tapEvents } from '../events/event-tap';
import { startApp, startToolServer, type ToolServer } from '../helpers/servers';

const readme = readFileSync('README.md', 'utf8');
const block = (lang: string, index = 0) => [...readme.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))][index]![1]!;

test('the tool file example loads, and the defaults its comments state are the code\'s', () => {
  const yaml = block('yaml');
  const config = parseConfig(yaml, 'README.yaml');
  const tool = config.tools[0]!;
  expect(Number(/default (\d+), counted from/.exec(yaml)![1])).toBe(TOOL_DEFAULTS.timeoutMs);
  expect(tool.retry).toMatchObject({ maxAttempts: TOOL_DEFAULTS.maxAttempts, initialBackoffMs: TOOL_DEFAULTS.initialBackoffMs, maxBackoffMs: TOOL_DEFAULTS.maxBackoffMs, backoffMultiplier: TOOL_DEFAULTS.backoffMultiplier, jitter: TOOL_DEFAULTS.jitter });
  expect(tool.loop).toMatchObject({ warnThreshold: TOOL_DEFAULTS.loopWarn, stopThreshold: TOOL_DEFAULTS.loopStop, failureWarnThreshold: TOOL_DEFAULTS.failureWarn, failureBlockThreshold: TOOL_DEFAULTS.failureBlock, blockCooldownMs: TOOL_DEFAULTS.blockCooldownMs, assumedWaitMs: TOOL_DEFAULTS.assumedWaitMs });
  expect([tool.maxResultChars, tool.memoizeTtlSeconds, tool.idempotency?.ttlSeconds]).toEqual([TOOL_DEFAULTS.maxResultChars, TOOL_DEFAULTS.memoizeTtlSeconds, TOOL_DEFAULTS.idempotencyTtlSeconds]);
  const { maxCallsPerTurn, maxArgumentBytes, maxMessageBytes, maxResponseBytes } = config.limits;
  expect({ maxCallsPerTurn, maxArgumentBytes, maxMessageBytes, maxResponseBytes }).toEqual({ maxCallsPerTurn: DEFAULT_LIMITS.maxCallsPerTurn, maxArgumentBytes: DEFAULT_LIMITS.maxArgumentBytes, maxMessageBytes: DEFAULT_LIMITS.maxMessageBytes, maxResponseBytes: DEFAULT_LIMITS.maxResponseBytes });
});

test('the limits the Security section names are the defaults', () => {
  const units: Readonly<Record<string, number>> = { '': 1, Mi: 2 ** 20, MiB: 2 ** 20 };
  const stated = (name: string) => {
    const match = new RegExp('`' + name + '`\\s+([\\d,]+)(?: (Mi|MiB))?\\b').exec(readme);
    if (!match) throw new Error(`README states no default for ${name}`);
    return Number(match[1]!.replaceAll(',', '')) * units[match[2] ?? '']!;
  };
  const names = { maxTurnsInFlight: 'max_turns_in_flight', maxTurnsPerTenant: 'max_turns_per_tenant', maxArgumentCharsInFlight: 'max_argument_chars_in_flight', maxCallsInFlight: 'max_calls_in_flight', maxAnswerBytesInFlight: 'max_answer_bytes_in_flight', maxToolsPerTenant: 'max_tools_per_tenant', maxSchemaBytesPerTenant: 'max_schema_bytes_per_tenant', maxSchemaBytesCompiledPerMinutePerTenant: 'max_schema_bytes_compiled_per_minute_per_tenant' } as const;
  for (const [key, name] of Object.entries(names)) expect([name, stated(name)]).toEqual([name, DEFAULT_LIMITS[key as keyof typeof names]]);
});

describe('against the service', () => {
  let tools: ToolServer;
  let d: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    tools = await startToolServer({ '/hang': () => undefined });
    d = await startApp(`tools:
  - { name: fetch_url, effect: read_only, timeout_ms: 300, retry: { initial_backoff_ms: 1 }, input_schema: '{"type":"object"}', http: { url: "${tools.url}/hang" } }
  - { name: echo, effect: read_only, input_schema: '{"type":"object"}', builtin: { name: echo } }
`);
  });
  afterAll(async () => {
    await d.close();
    await tools.close();
  });

  test('the error JSON example is what a read-only tool that timed out twice returns, key for key', async () => {
    const example = JSON.stringify(JSON.parse(block('json'))).replace('within 3000 ms', 'within 300 ms');
    const { results } = await d.dispatch.dispatch({ sessionId: 'readme-timeout', calls: [{ id: 'c1', name: 'fetch_url', arguments: '{}' }] });
    expect(results[0]!.output).toBe(example);
  });

  test('a Subscribe filtered by tool receives TURN_END only when it names the empty tool ""', async () => {
    const withEmpty = await tapEvents(d.address, { tools: ['', 'echo'] });
    const toolOnly = await tapEvents(d.address, { tools: ['echo'] });
    try {
      await d.dispatch.dispatch({ sessionId: 'readme-turn-end', calls: [{ id: 'c1', name: 'echo', arguments: '{}' }] });
      await withEmpty.waitFor((events) => events.some((e) => e.kind === EventKind.TURN_END));
      await toolOnly.waitFor((events) => events.some((e) => e.kind === EventKind.TOOL_POST));
      expect(seq(withEmpty.events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1', 'TURN_END']);
      expect(seq(toolOnly.events)).toEqual(['CALL_RECEIVED:c1', 'TOOL_PRE:c1#1', 'TOOL_POST:c1#1']);
    } finally {
      withEmpty.close();
      toolOnly.close();
    }
  });
});
