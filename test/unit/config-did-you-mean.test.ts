// README: a bad config names "a misspelt key, at any depth, with the key it likely means". That held
// for tools, auth, redis and registry only: limits said `is not a known limit`, and telemetry,
// policies and mcp_servers listed every key they take; a misspelt built-in had no path. Each is
// loaded as dispatchd loads it (buildApp), and must stop the start naming the path and the key meant.
import { buildApp } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';

/** The message buildApp refuses `yaml` with. */
async function refusal(yaml: string): Promise<string> {
  try {
    const app = await buildApp(parseConfig(yaml, 'c.yaml'), { logger: SILENT_LOGGER });
    await app.close();
  } catch (error) {
    return (error as Error).message;
  }
  return 'loaded';
}

test.each([
  ['limits', 'limits: { max_calls_per_trn: 5 }\ntools: []\n', 'c.yaml: limits.max_calls_per_trn: unknown key "max_calls_per_trn" (did you mean max_calls_per_turn?)'],
  ['limits, a key every object has', 'limits: { toString: 5 }\ntools: []\n', 'c.yaml: limits.toString: unknown key "toString" (expected one of max_message_bytes, '],
  ['telemetry', 'tools: []\ntelemetry: { debug_payload: true }\n', 'c.yaml: telemetry.debug_payload: unknown key "debug_payload" (did you mean debug_payloads?)'],
  ['policies: a rate setting', 'tools: []\npolicies: [{ match: "a", rate: { per_secnd: 1 } }]\n', 'c.yaml: policies[0].rate.per_secnd: unknown key "per_secnd" (did you mean per_second?)'],
  ['policies: a misspelt kind', 'tools: []\npolicies: [{ match: "a", rat: { per_second: 1 } }]\n', 'c.yaml: policies[0].rat: unknown key "rat" (did you mean rate?)'],
  ['policies: a rule', 'tools: []\npolicies: [{ decide: block, reasn: x }]\n', 'c.yaml: policies[0].reasn: unknown key "reasn" (did you mean reason?)'],
  ['policies: a condition', 'tools: []\npolicies: [{ decide: allow, when: [{ pointer: /a, op: exists, valu: true }] }]\n', 'c.yaml: policies[0].when[0].valu: unknown key "valu" (did you mean value?)'],
  ['policies: a breaker setting', 'tools: []\npolicies: [{ match: "a", breaker: { min_cals: 3 } }]\n', 'c.yaml: policies[0].breaker.min_cals: unknown key "min_cals" (did you mean min_calls?)'],
  ['mcp_servers', 'tools: []\nmcp_servers: [{ name: f, comand: ["node", "x"] }]\n', 'c.yaml: mcp_servers[0].comand: unknown key "comand" (did you mean command?)'],
  ['a built-in near one', 'tools:\n  - { name: a, builtin: { name: echo } }\n  - { name: b, builtin: { name: echoo } }\n', 'c.yaml: tools[1].builtin.name: there is no built-in tool "echoo" (did you mean echo? built-ins: echo, sleep)'],
  ['a built-in near none', 'tools:\n  - { name: a, builtin: { name: nope } }\n', 'c.yaml: tools[0].builtin.name: there is no built-in tool "nope" (built-ins: echo, sleep)'],
])('%s', async (_label, yaml, message) => {
  expect((await refusal(yaml)).slice(0, message.length)).toBe(message);
});

test('a limit written in camelCase is still taken, as before', async () => {
  expect(parseConfig('limits: { maxCallsPerTurn: 7 }\ntools: []\n', 'c.yaml').limits.maxCallsPerTurn).toBe(7);
});
