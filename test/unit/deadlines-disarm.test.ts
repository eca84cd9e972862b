import { DEADLINES, Deadlines } from '../../src/pipeline';
import { startApp } from '../helpers/servers';

// The deadlines' one timer stays armed for a deadline cancelled since (re-arming per call is what
// it saves), and fires for nothing up to a call's timeout later. An app's close disarmed nothing:
// the timer kept the closed app's modules alive until then (in a jest worker, each test file's
// whole module graph, tens of MB a file). Now close disarms it when no deadline is pending.

const timerOf = (deadlines: Deadlines) => (deadlines as unknown as { timer?: NodeJS.Timeout }).timer;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a cancelled deadline leaves the timer armed; disarmIfIdle stops it, and a new deadline arms it again', async () => {
  const deadlines = new Deadlines();
  deadlines.cancel(deadlines.add(60_000, () => undefined));
  expect(timerOf(deadlines)).toBeDefined();
  deadlines.disarmIfIdle();
  expect(timerOf(deadlines)).toBeUndefined();
  let fired = false;
  deadlines.add(10, () => (fired = true));
  await sleep(60);
  expect(fired).toBe(true);
});

test('disarmIfIdle leaves a pending deadline to fire', async () => {
  const deadlines = new Deadlines();
  let fired = false;
  deadlines.add(20, () => (fired = true));
  deadlines.disarmIfIdle();
  expect(timerOf(deadlines)).toBeDefined();
  await sleep(80);
  expect(fired).toBe(true);
});

test('an app closed after its calls leaves no deadline timer armed', async () => {
  const d = await startApp('tools:\n  - name: echo\n    effect: read_only\n    builtin: { name: echo }\n');
  const { results } = await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'echo', arguments: '{"text":"hi"}' }] });
  expect(results[0]!.isError).toBe(false);
  // The call's timeout was cancelled when it answered; the timer was still armed for it.
  expect(DEADLINES.size).toBe(0);
  expect(timerOf(DEADLINES)).toBeDefined();
  await d.close();
  expect(timerOf(DEADLINES)).toBeUndefined();
});
