import { parseConfig } from '../../src/config';
import { startupWarnings } from '../../src/guards';
import { startApp } from '../helpers/servers';
import type { Logger } from '../../src/log';

// Found by a probe: a tighter budget for delete_row after one for delete_*, or a block after an
// allow of the same tool, loaded without a word and never applied (the first fitting entry of a
// kind applies). Warned at start-up now, naming the entry that wins.

const yaml = `
tools:
  - { name: delete_row, effect: side_effect, builtin: { name: echo } }
  - { name: delete_table, effect: side_effect, builtin: { name: echo } }
  - { name: search, effect: read_only, builtin: { name: echo } }
policies:
  - { match: "delete_*", budget: { max_calls_per_session: 2 } }
  - { match: delete_row, budget: { max_calls_per_session: 1 } }
  - { name: open-search, match: search, decide: allow }
  - { match: search, decide: block, reason: "never" }
  - { match: "delete_*", decide: block, when: [{ pointer: /all, op: "=", value: true }], reason: "not all" }
  - { match: delete_table, decide: ask, reason: "a human decides" }
  - { match: "*", concurrency: { max_in_flight: 4 } }
  - { match: search, rate: { per_second: 2 } }
`;

const shadowed = () => startupWarnings(parseConfig(yaml, 'dispatch.yaml')).filter((w) => 'shadowedBy' in w.fields);

test('an entry that an earlier entry of its kind always wins over, for every tool it fits, is warned of', () => {
  expect(shadowed()).toEqual([
    {
      message: "policies[1]: this budget entry never applies to the config file's tools it fits (delete_row): policies[0] before it fits them too, and the first budget entry fitting a tool applies; put the narrower entry first",
      fields: { policy: 1, kind: 'budget', shadowedBy: [0], tools: ['delete_row'] },
    },
    {
      message: "policies[3]: this decide entry never applies to the config file's tools it fits (search): policies[2] (open-search) before it fits them too, and the first decide entry fitting a tool applies; put the narrower entry first",
      fields: { policy: 3, kind: 'decide', shadowedBy: [2], tools: ['search'] },
    },
  ]);
});

test('a rule with conditions, a modify rule, another kind, or an entry fitting a tool no earlier one fits is not', () => {
  // policies[5] (ask delete_table) follows a block of delete_* with a condition: it applies when the condition does not hold.
  // policies[7] (a rate) follows a concurrency cap of "*": another kind.
  expect(shadowed().map((w) => w.fields.policy)).toEqual([1, 3]);
});

test('dispatch logs it at start-up', async () => {
  const warned: [string, Record<string, unknown> | undefined][] = [];
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message, fields) => void warned.push([message, fields]) };
  const app = await startApp(yaml, { logger });
  await app.close();
  expect(warned.filter(([, fields]) => fields !== undefined && 'shadowedBy' in fields).map(([, fields]) => fields?.policy)).toEqual([1, 3]);
});
