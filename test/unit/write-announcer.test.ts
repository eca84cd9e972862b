import { createLogger } from '../../src/log';
import { createWriteAnnouncer } from '../../src/store/redis/write-announcer';

// The announcer's own rules, with a publish function that fails while `down` is set (the real
// Redis case, NOPERM then a permission given back, is test/redis/memo-write-retry.test.ts): what
// failed is tried again with doubling waits, each resource held once, past the bound one write of
// every resource instead, and close tries once more and stops.

function harness(options: { maxWaiting?: number } = {}) {
  const sent: { resource: string | undefined; at: number; ok: boolean }[] = [];
  const logged: { level: string; message: string; count?: number }[] = [];
  const state = { down: true };
  const started = Date.now();
  const announcer = createWriteAnnouncer(
    async (resource) => {
      sent.push({ resource, at: Date.now() - started, ok: !state.down });
      if (state.down) throw new Error('refused');
    },
    { firstDelayMs: 20, maxDelayMs: 80, maxWaiting: options.maxWaiting, logger: createLogger('info', (line) => logged.push(JSON.parse(line)) > 0) },
  );
  return { announcer, sent, logged, state };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, ms = 3_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await sleep(5)) if (Date.now() > deadline) throw new Error('timed out');
}

test('a refused announcement is tried again with doubling waits up to the longest, until taken; then the waits start over', async () => {
  const { announcer, sent, logged, state } = harness();
  announcer.announce('r1');
  const tries = () => sent.filter((s) => s.resource === 'r1');
  await until(() => tries().length >= 6);
  // Waits of 20, 40, 80, 80, 80 ms (a timer never fires early; a busy machine fires it late).
  const gaps = tries().slice(1, 6).map((t, i) => t.at - tries()[i]!.at);
  [20, 40, 80, 80, 80].forEach((wait, i) => expect(gaps[i]).toBeGreaterThanOrEqual(wait - 1));
  // Doubling on would have made the fifth 320.
  expect(gaps[4]).toBeLessThan(240);
  expect(announcer.waiting).toBe(1);
  state.down = false;
  await until(() => announcer.waiting === 0 && sent.some((s) => s.ok));
  expect(sent.filter((s) => s.ok).map((s) => s.resource)).toEqual(['r1']);
  await until(() => logged.length === 2);
  expect(logged.map((l) => l.level)).toEqual(['warn', 'info']);
  // Taken: nothing more is sent, and the next refusal waits the first wait again.
  const before = sent.length;
  await sleep(100);
  expect(sent.length).toBe(before);
  state.down = true;
  announcer.announce('r2');
  const again = () => sent.filter((s) => s.resource === 'r2');
  await until(() => again().length >= 2);
  expect(again()[1]!.at - again()[0]!.at).toBeLessThan(79);
  await announcer.close();
});

test('a resource written again while refused is held once, and published once when taken', async () => {
  const { announcer, sent, state } = harness();
  for (let i = 0; i < 50; i++) announcer.announce(i % 2 ? 'odd' : 'even');
  await sleep(10);
  expect(announcer.waiting).toBe(2);
  state.down = false;
  await until(() => announcer.waiting === 0 && sent.filter((s) => s.ok).length >= 2);
  await sleep(50);
  expect(sent.filter((s) => s.ok).map((s) => s.resource).sort()).toEqual(['even', 'odd']);
  await announcer.close();
});

test('past maxWaiting resources, one announcement that any may have been written replaces them', async () => {
  const { announcer, sent, state } = harness({ maxWaiting: 3 });
  for (const r of ['a', 'b', 'c']) announcer.announce(r);
  await sleep(5);
  expect(announcer.waiting).toBe(3);
  announcer.announce('d');
  await sleep(5);
  expect(announcer.waiting).toBe(1);
  // A later write is covered by it, and adds nothing.
  announcer.announce('e');
  await sleep(5);
  expect(announcer.waiting).toBe(1);
  state.down = false;
  await until(() => announcer.waiting === 0 && sent.some((s) => s.ok));
  await sleep(50);
  expect(sent.filter((s) => s.ok).map((s) => s.resource)).toEqual([undefined]);
  expect(announcer.waiting).toBe(0);
  await announcer.close();
});

test('close tries once more, logs what it could not publish, and stops trying', async () => {
  const { announcer, sent, logged } = harness();
  announcer.announce('x');
  announcer.announce('y');
  await sleep(5);
  const before = sent.length;
  await announcer.close();
  expect(sent.length).toBe(before + 2);
  expect(logged.at(-1)).toMatchObject({ level: 'warn', count: 2 });
  await sleep(100);
  expect(sent.length).toBe(before + 2);
});

test('close after everything was taken sends nothing and logs nothing more', async () => {
  const { announcer, sent, logged, state } = harness();
  state.down = false;
  announcer.announce('z');
  await sleep(5);
  await announcer.close();
  expect(sent).toHaveLength(1);
  expect(logged).toEqual([]);
});
