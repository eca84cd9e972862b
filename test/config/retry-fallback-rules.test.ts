import { startApp, type TestDispatch } from '../helpers/servers';
import { expectRefusedAlike, expectTakenAlike } from './tool-refusals';

// Two settings that loaded and then did something else than they said: a fallback_tool naming the
// tool itself (a call never falls back to a tool it ran on, so no fallback ever ran), and an
// initial_backoff_ms over max_backoff_ms (every wait is cut to max_backoff_ms). Refused at load.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools: []\n');
});
afterAll(() => d.close());

test('a fallback_tool naming the tool itself is refused; another tool, or one not (yet) registered, loads', async () => {
  await expectRefusedAlike(
    d,
    'name: lookup, effect: read_only, fallback_tool: lookup, builtin: { name: echo }',
    'tools[0]: tool "lookup": fallback_tool names the tool itself: a fallback is another tool, run when this one fails, and a call never falls back to a tool it ran on; name another tool, or leave fallback_tool out',
  );
  await expectTakenAlike(d, 'name: lookup, effect: read_only, fallback_tool: lookup_cached, builtin: { name: echo }');
});

test('initial_backoff_ms over max_backoff_ms is refused, naming both values (and a default taken)', async () => {
  await expectRefusedAlike(
    d,
    'name: slow, effect: read_only, retry: { initial_backoff_ms: 2000, max_backoff_ms: 1000 }, builtin: { name: echo }',
    'tools[0]: tool "slow": retry.initial_backoff_ms (2000) is more than retry.max_backoff_ms (1000): every wait is cut to max_backoff_ms; lower initial_backoff_ms or raise max_backoff_ms',
  );
  await expectRefusedAlike(
    d,
    'name: slow, effect: read_only, retry: { initial_backoff_ms: 20000 }, builtin: { name: echo }',
    'tools[0]: tool "slow": retry.initial_backoff_ms (20000) is more than retry.max_backoff_ms (10000, its default): every wait is cut to max_backoff_ms; lower initial_backoff_ms or raise max_backoff_ms',
  );
});

test('initial_backoff_ms up to max_backoff_ms loads, as does a max_backoff_ms under the default initial one (which it caps)', async () => {
  for (const retry of ['initial_backoff_ms: 1000, max_backoff_ms: 1000', 'initial_backoff_ms: 10, max_backoff_ms: 20', 'max_backoff_ms: 100', 'initial_backoff_ms: 10000']) {
    await expectTakenAlike(d, `name: ok, effect: read_only, retry: { ${retry} }, builtin: { name: echo }`);
  }
});
