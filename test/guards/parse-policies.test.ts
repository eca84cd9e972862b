import { parse } from 'yaml';
import { buildApp } from '../../src/app';
import { ConfigError, parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { DEFAULT_BREAKER_SETTINGS, parsePolicies } from '../../src/guards';

const policies = (text: string) => parsePolicies(parse(text) as unknown[], 'dispatch.yaml');
const problem = (text: string) => {
  try {
    policies(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('no problem found');
};

test('a full policies section parses into rules, an endpoint, breaker settings and after rules', () => {
  const config = policies(`
- name: big-payments
  match: "payments.*"
  when: [{ pointer: /amount, op: ">", value: 1000 }, { pointer: /currency, op: in, value: [USD, EUR] }]
  decide: block
  reason: too large
- decide: modify
  set: { /currency: EUR, /meta/source: dispatch }
  remove: [/debug]
- endpoint: { url: "http://127.0.0.1:9000/policy", timeout_ms: 500, fail_open: true, headers: { authorization: "Bearer x" } }
- match: [slow_*, flaky]
  breaker: { consecutive_failures: 3, half_open_after_ms: 1000 }
- match: search
  after: { warn: check the dates }
- match: "slow_*"
  concurrency: { max_in_flight: 4, wait_ms: 250, shared: true, fallback_max_in_flight: 2 }
- concurrency: { max_in_flight: 1 }
- match: licensed
  concurrency: { max_in_flight: 3, shared: true, fail_closed: true }
- match: search
  rate: { per_second: 2.5, wait_ms: 500, shared: true }
- match: [mail_*]
  rate: { per_minute: 30, burst: 5 }
- match: [send_*, post_*]
  budget: { max_calls_per_session: 20 }
`);
  expect(config.rules).toHaveLength(2);
  expect(config.rules[0]).toMatchObject({ label: 'big-payments', match: ['payments.*'], decide: 'block', reason: 'too large', when: [{ pointer: '/amount', op: '>', value: 1000 }, { pointer: '/currency', op: 'in', value: ['USD', 'EUR'] }] });
  expect(config.rules[1]).toMatchObject({ label: 'policies[1]', match: ['*'], decide: 'modify', set: [['/currency', 'EUR'], ['/meta/source', 'dispatch']], remove: ['/debug'] });
  expect(config.endpoint).toEqual({ url: 'http://127.0.0.1:9000/policy', match: ['*'], timeoutMs: 500, failOpen: true, headers: { authorization: 'Bearer x' } });
  expect(config.breakers).toEqual([{ match: ['slow_*', 'flaky'], settings: { ...DEFAULT_BREAKER_SETTINGS, consecutiveFailures: 3, halfOpenAfterMs: 1000 } }]);
  expect(config.after).toEqual([{ match: ['search'], on: 'any', warn: 'check the dates', contains: undefined }]);
  expect(config.concurrency).toEqual([
    { match: ['slow_*'], maxInFlight: 4, waitMs: 250, shared: true, fallbackMaxInFlight: 2, failClosed: false },
    { match: ['*'], maxInFlight: 1, waitMs: 0, shared: false, fallbackMaxInFlight: 1, failClosed: false },
    { match: ['licensed'], maxInFlight: 3, waitMs: 0, shared: true, fallbackMaxInFlight: 3, failClosed: true },
  ]);
  expect(config.rates).toEqual([
    { match: ['search'], perSecond: 2.5, burst: 3, waitMs: 500, shared: true, text: '2.5 calls per second' },
    { match: ['mail_*'], perSecond: 0.5, burst: 5, waitMs: 0, shared: false, text: '30 calls per minute' },
  ]);
  expect(config.budgets).toEqual([{ match: ['send_*', 'post_*'], maxCalls: 20 }]);
});

test.each([
  ['- {}', 'dispatch.yaml: policies[0]: needs one of decide (a rule), endpoint, breaker, after, concurrency, rate or budget'],
  ['- plain text', 'dispatch.yaml: policies[0]: must be a mapping'],
  ['- { decide: block, breaker: {} , reason: x }', 'dispatch.yaml: policies[0]: holds both decide and breaker; put each in its own entry'],
  ['- { decide: deny }', 'dispatch.yaml: policies[0].decide: must be one of allow, block, ask, modify, got "deny"'],
  ['- { decide: block }', 'dispatch.yaml: policies[0].reason: a block rule needs a reason: the model (or the approver) reads it'],
  ['- { decide: allow, when: [{ pointer: /a, op: "~", value: 1 }] }', 'dispatch.yaml: policies[0].when[0].op: must be one of = != > >= < <= in exists matches, got "~"'],
  ['- { decide: allow, when: [{ pointer: amount, op: ">", value: 1 }] }', 'dispatch.yaml: policies[0].when[0].pointer: must be a JSON pointer such as "/amount", got "amount"'],
  ['- { decide: allow, when: [{ pointer: /a, op: ">", value: "10" }] }', 'dispatch.yaml: policies[0].when[0].value: must be a number for >, got "10"'],
  ['- { decide: allow, when: [{ pointer: /a, op: in, value: 3 }] }', 'dispatch.yaml: policies[0].when[0].value: must be a list for in, got 3'],
  ['- { decide: allow, when: [{ pointer: /a, op: "=" }] }', 'dispatch.yaml: policies[0].when[0].value: is required for ='],
  ['- { decide: allow, when: [{ pointer: /a, op: exists, valu: true }] }', 'dispatch.yaml: policies[0].when[0].valu: unknown key "valu" (did you mean value?)'],
  ['- { decide: modify }', 'dispatch.yaml: policies[0].decide: a modify rule needs set or remove'],
  ['- { decide: allow, set: { /a: 1 } }', 'dispatch.yaml: policies[0].set: only a modify rule may set or remove arguments'],
  ['- { decide: modify, set: { a: 1 } }', 'dispatch.yaml: policies[0].set.a: must be a JSON pointer such as "/amount", got "a"'],
  ['- { decide: allow, match: [] }', 'dispatch.yaml: policies[0].match: must be a tool-name glob or a non-empty list of them'],
  ['- { decide: allow, because: x }', 'dispatch.yaml: policies[0].because: unknown key "because" (expected one of name, match, when, decide, reason, set, remove)'],
  ['- { endpoint: { url: "ftp://x" } }', 'dispatch.yaml: policies[0].endpoint.url: must be an http or https URL, got "ftp://x"'],
  ['- { endpoint: { url: "http://x", timeout_ms: 0 } }', 'dispatch.yaml: policies[0].endpoint.timeout_ms: must be a positive integer, got 0'],
  ['- { endpoint: { url: "http://x" } }\n- { endpoint: { url: "http://y" } }', 'dispatch.yaml: policies[1].endpoint: only one policy endpoint may be configured'],
  ['- { breaker: { consecutive: 3 } }', 'dispatch.yaml: policies[0].breaker.consecutive: unknown key "consecutive" (did you mean consecutive_failures?)'],
  ['- { breaker: { failure_rate: 50 } }', 'dispatch.yaml: policies[0].breaker.failure_rate: must be a number in (0, 1], got 50'],
  ['- { breaker: { min_calls: 2.5 } }', 'dispatch.yaml: policies[0].breaker.min_calls: must be a positive integer, got 2.5'],
  ['- { breaker: {}, reason: x }', 'dispatch.yaml: policies[0].reason: unknown key "reason" (expected one of match, breaker)'],
  ['- { budget: 5 }', 'dispatch.yaml: policies[0].budget: must be a mapping with max_calls_per_session'],
  ['- { budget: { max_calls_per_session: 0 } }', 'dispatch.yaml: policies[0].budget.max_calls_per_session: must be a positive integer, got 0'],
  ['- { budget: { max_calls: 5 } }', 'dispatch.yaml: policies[0].budget.max_calls: unknown key "max_calls" (did you mean max_calls_per_session?)'],
  ['- { rate: 5 }', 'dispatch.yaml: policies[0].rate: must be a mapping with per_second or per_minute, and optionally burst, wait_ms and shared'],
  ['- { rate: { burst: 2 } }', 'dispatch.yaml: policies[0].rate: needs per_second or per_minute'],
  ['- { rate: { per_second: 1, per_minute: 60 } }', 'dispatch.yaml: policies[0].rate: has both per_second and per_minute; give one'],
  ['- { rate: { per_second: 0 } }', 'dispatch.yaml: policies[0].rate.per_second: must be a positive number of calls, at most 1000000 per second, got 0'],
  ['- { rate: { per_minute: fast } }', 'dispatch.yaml: policies[0].rate.per_minute: must be a positive number of calls, at most 1000000 per second, got "fast"'],
  ['- { rate: { per_second: 1, burst: 1.5 } }', 'dispatch.yaml: policies[0].rate.burst: must be a positive integer, got 1.5'],
  ['- { rate: { per_second: 1, wait_ms: -5 } }', 'dispatch.yaml: policies[0].rate.wait_ms: must be a non-negative integer (milliseconds), got -5'],
  ['- { rate: { per_second: 1, shared: 1 } }', 'dispatch.yaml: policies[0].rate.shared: must be true or false, got 1'],
  ['- { rate: { per_second: 1, per_hour: 5 } }', 'dispatch.yaml: policies[0].rate.per_hour: unknown key "per_hour" (expected one of per_second, per_minute, burst, wait_ms, shared, per_tenant)'],
  ['- { concurrency: 4 }', 'dispatch.yaml: policies[0].concurrency: must be a mapping with max_in_flight, and optionally wait_ms, shared, fallback_max_in_flight and fail_closed'],
  ['- { concurrency: { max_in_flight: 2, fallback_max_in_flight: 1 } }', 'dispatch.yaml: policies[0].concurrency.fallback_max_in_flight: applies to a shared cap only (shared: true): it says what holds while Redis fails'],
  ['- { concurrency: { max_in_flight: 2, fail_closed: true } }', 'dispatch.yaml: policies[0].concurrency.fail_closed: applies to a shared cap only (shared: true): it says what holds while Redis fails'],
  ['- { concurrency: { max_in_flight: 2, shared: true, fallback_max_in_flight: 0 } }', 'dispatch.yaml: policies[0].concurrency.fallback_max_in_flight: must be a positive integer, got 0'],
  ['- { concurrency: { max_in_flight: 2, shared: true, fail_closed: 1 } }', 'dispatch.yaml: policies[0].concurrency.fail_closed: must be true or false, got 1'],
  ['- { concurrency: { max_in_flight: 2, shared: true, fallback_max_in_flight: 1, fail_closed: true } }', 'dispatch.yaml: policies[0].concurrency: has both fallback_max_in_flight and fail_closed: while Redis fails, calls either run under the fallback cap or are refused'],
  ['- { concurrency: { max_in_flight: 2, shared: yes please } }', 'dispatch.yaml: policies[0].concurrency.shared: must be true or false, got "yes please"'],
  ['- { concurrency: { max_in_flight: 0 } }', 'dispatch.yaml: policies[0].concurrency.max_in_flight: must be a positive integer, got 0'],
  ['- { concurrency: { max_in_flight: 2, wait_ms: -1 } }', 'dispatch.yaml: policies[0].concurrency.wait_ms: must be a non-negative integer (milliseconds), got -1'],
  ['- { concurrency: { max_in_flight: 2, queue: 5 } }', 'dispatch.yaml: policies[0].concurrency.queue: unknown key "queue" (expected one of max_in_flight, max_in_flight_per_tenant, wait_ms, shared, fallback_max_in_flight, fail_closed)'],
  ['- { after: { on: always, warn: x } }', 'dispatch.yaml: policies[0].after.on: must be any, error or success, got "always"'],
])('%s', (text, message) => {
  expect(problem(text)).toBe(message);
});

test('the app refuses to start with a bad policies section, naming the file and path', async () => {
  const config = parseConfig('policies:\n  - { decide: block }\n', 'bad.yaml');
  await expect(buildApp(config, { logger: SILENT_LOGGER })).rejects.toThrow('bad.yaml: policies[0].reason: a block rule needs a reason: the model (or the approver) reads it');
});
