// A limit is taken in snake_case or camelCase (max_calls_per_turn, maxCallsPerTurn). Given both
// ways in one `limits:` mapping, the later one won silently, past the duplicate-key check YAML
// gives every other key: `max_calls_per_turn: 5` read as 500 beside `maxCallsPerTurn: 500`.
import { ConfigError, parseConfig } from '../../src/config';

test('one limit given in both spellings is refused, naming both keys', () => {
  const parse = () => parseConfig('tools: []\nlimits:\n  max_calls_per_turn: 5\n  maxCallsPerTurn: 500\n', 'dispatch.yaml');
  expect(parse).toThrow(ConfigError);
  expect(parse).toThrow('dispatch.yaml: limits.maxCallsPerTurn: the limit max_calls_per_turn is already given as max_calls_per_turn; give it once');
});

test('each spelling alone is still taken', () => {
  expect(parseConfig('limits: { max_calls_per_turn: 5 }\n', 'dispatch.yaml').limits.maxCallsPerTurn).toBe(5);
  expect(parseConfig('limits: { maxCallsPerTurn: 7 }\n', 'dispatch.yaml').limits.maxCallsPerTurn).toBe(7);
});
