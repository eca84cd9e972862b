import { Effect } from '../../gen/dispatch/v1/tool_pb';
import { parseConfig } from '../../src/config';
import { resolveLimits } from '../../src/options/limits';
import { startApp } from '../helpers/servers';

// Limits past what Node, V8 or the stores can honour are refused at load, with their maximum.

test('a store timeout past the timer limit is refused (Node ran it after 1 ms: store steps timed out at random); the limit itself works', async () => {
  // What it did: Node runs a timer of 2^31 ms or more after 1 ms (2 of 20 PINGs to an idle Redis timed out).
  expect(() => resolveLimits({ storeTimeoutMs: 2 ** 31 })).toThrow('limits.storeTimeoutMs must be at most 2147483647 (Node runs longer timers at once), got 2147483648');
  const app = await startApp('limits:\n  store_timeout_ms: 2147483647\ntools:\n  - name: send\n    effect: side_effect\n    builtin: { name: echo }\n');
  try {
    const res = await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'send', arguments: '{"text":"x"}' }] });
    expect(res.results[0]!.isError).toBe(false);
  } finally {
    await app.close();
  }
});

test('each limit with a maximum refuses one past it and takes the maximum itself', () => {
  const maxima: Record<string, number> = {
    storeTimeoutMs: 2 ** 31 - 1,
    approvalTimeoutMs: 2 ** 31 - 1,
    keepaliveTimeMs: 2 ** 31 - 1,
    keepaliveTimeoutMs: 2 ** 31 - 1,
    maxConnectionAgeMs: 2 ** 31 - 1,
    maxMessageBytes: 2 ** 31 - 1,
    maxToolOutputChars: 2 ** 29 - 24,
    loopWindow: 10_000,
    maxArgumentDepth: 1_000,
  };
  for (const [key, max] of Object.entries(maxima)) {
    expect(resolveLimits({ [key]: max })[key as 'loopWindow']).toBe(max);
    expect(() => resolveLimits({ [key]: max + 1 })).toThrow(`limits.${key} must be at most ${max}`);
  }
});

test("a tool's effect spelt otherwise than read_only or side_effect is refused with the names it takes", () => {
  const yaml = (effect: string) => `tools:\n  - name: send\n    effect: ${effect}\n    builtin: { name: echo }\n`;
  // Before: 'cannot decode enum dispatch.v1.Effect from JSON: "EFFECT_SIDE_EFFECTING"'.
  expect(() => parseConfig(yaml('side_effecting'), 'test.yaml')).toThrow('test.yaml: tools[0].effect: must be read_only or side_effect, got "side_effecting"');
  expect(parseConfig(yaml('side_effect'), 'test.yaml').tools[0]!.effect).toBe(Effect.SIDE_EFFECT);
  expect(parseConfig(yaml('EFFECT_READ_ONLY'), 'test.yaml').tools[0]!.effect).toBe(Effect.READ_ONLY);
  // Any case, as before the check.
  expect(parseConfig(yaml('READ_ONLY'), 'test.yaml').tools[0]!.effect).toBe(Effect.READ_ONLY);
  expect(parseConfig(yaml('Side_Effect'), 'test.yaml').tools[0]!.effect).toBe(Effect.SIDE_EFFECT);
});

test('arguments as deep as the largest max_argument_depth are validated and run', async () => {
  const app = await startApp('limits:\n  max_argument_depth: 1000\ntools:\n  - name: deep\n    effect: read_only\n    builtin: { name: echo }\n    input_schema: {"type":"object","properties":{"text":{"type":"string"},"nested":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}}}\n');
  try {
    const nested = '['.repeat(998) + ']'.repeat(998);
    const res = await app.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'deep', arguments: `{"text":"x","nested":${nested}}` }] });
    expect(res.results[0]!.isError).toBe(false);
  } finally {
    await app.close();
  }
});

test('a limit mistake in the config file names the key as the file spells it', () => {
  // Before: 'limits: maxCallsPerTunr is not a known limit' for a file saying max_calls_per_tunr.
  expect(() => parseConfig('limits: { max_calls_per_tunr: 5 }\ntools: []\n', 'd.yaml')).toThrow('d.yaml: limits.max_calls_per_tunr: unknown key "max_calls_per_tunr" (did you mean max_calls_per_turn?)');
  expect(() => parseConfig('limits: { max_calls_per_turn: 0 }\ntools: []\n', 'd.yaml')).toThrow('d.yaml: limits.max_calls_per_turn: must be a positive integer, got 0');
  expect(() => parseConfig('limits: { loop_window: 20000 }\ntools: []\n', 'd.yaml')).toThrow("d.yaml: limits.loop_window: must be at most 10000 (each call reads its session's whole window), got 20000");
});
