import { MAX_RECOVERY_ATTEMPTS } from '../../src/options';
import { startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { expectRefusedAlike, expectTakenAlike, startRefusal } from './tool-refusals';

// retry.max_attempts counts every attempt, the first included (DESIGN section 4), and a call runs
// at most 5 in all: a call needing more ends the whole RPC RECOVERY_EXHAUSTED (section 3, step 12).
// max_attempts: 10 loaded, and a tool failing transiently then cost the turn's other results. It
// is refused at load, by dispatchd's start and by RegisterTools alike.

let d: TestDispatch;
let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/down': (_req, res) => void res.writeHead(503).end('down') });
  d = await startApp('tools: []\n');
});
afterAll(async () => {
  await d.close();
  await tools.close();
});

const CAP = `retry.max_attempts is 10, over the limit of ${MAX_RECOVERY_ATTEMPTS}: a call runs at most ${MAX_RECOVERY_ATTEMPTS} attempts in all (the first included), and one needing more ends the whole RPC RECOVERY_EXHAUSTED`;

test('max_attempts past 5 is refused, saying the cap and what a call needing more does', async () => {
  await expectRefusedAlike(d, 'name: greedy, effect: read_only, retry: { max_attempts: 10 }, builtin: { name: echo }', `tools[0]: tool "greedy": ${CAP}`);
  expect(startRefusal('name: six, effect: read_only, retry: { max_attempts: 6 }, builtin: { name: echo }')).toBe(
    'tools.yaml: tools[0]: tool "six": retry.max_attempts is 6, over the limit of 5: a call runs at most 5 attempts in all (the first included), and one needing more ends the whole RPC RECOVERY_EXHAUSTED',
  );
});

test('max_attempts 1 to 5 load; 5 runs the tool 5 times and ends the call with its error, soft, not the RPC', async () => {
  for (const attempts of [1, 2, 5]) await expectTakenAlike(d, `name: a${attempts}, effect: read_only, retry: { max_attempts: ${attempts} }, builtin: { name: echo }`);
  await expectTakenAlike(d, `name: five, effect: read_only, retry: { max_attempts: 5, initial_backoff_ms: 1, max_backoff_ms: 2 }, http: { url: "${tools.url}/down" }`);
  const { results } = await d.dispatch.dispatch({ sessionId: 'cap', calls: [{ id: 'c1', name: 'five', arguments: '{}' }] });
  expect(results[0]).toMatchObject({ isError: true, attempts: 5 });
  expect(tools.count('/down')).toBe(5);
});

test('max_attempts: 0 in a file, which reads as no attempt but was the default (2), is refused; left out, it is the default', async () => {
  expect(startRefusal('name: none, effect: read_only, retry: { max_attempts: 0 }, builtin: { name: echo }')).toBe(
    'tools.yaml: tools[0].retry.max_attempts: must be at least 1: it counts every attempt, the first included (1: no retry); leave it out for the default, 2',
  );
  expect(startRefusal('name: default, effect: read_only, retry: { initial_backoff_ms: 5 }, builtin: { name: echo }')).toBe('loaded');
});
