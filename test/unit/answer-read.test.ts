import { fetch as undiciFetch } from 'undici';
import { createAnswerBudget } from '../../src/executors/answer-budget';
import { decoderFor, readCapped } from '../../src/executors/http-body';
import { startToolServer, type ToolServer } from '../helpers/servers';

// An HTTP tool's answer is read only until its text passes limits.max_tool_output_chars (the rest
// is not downloaded), decoded across chunks, and the bytes read at once by all calls are bounded.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tooLarge = () => new Error('too large');
const ZH = Buffer.from('ж'.repeat(40)); // 80 bytes, 2 each
let server: ToolServer;
let endlessClosed: Promise<void>;
let closeEndless: () => void;

beforeAll(async () => {
  endlessClosed = new Promise((resolve) => (closeEndless = resolve));
  server = await startToolServer({
    // 7-byte chunks, apart in time: every other one splits a character.
    '/split': async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      for (let at = 0; at < ZH.length; at += 7) {
        res.write(ZH.subarray(at, at + 7));
        await sleep(5);
      }
      res.end();
    },
    // Never ends on its own: only a reader that stops and cancels closes it.
    '/endless': async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.once('close', () => closeEndless());
      for (let i = 0; i < 2000 && !res.destroyed; i++) {
        // Byte i * 7 of the endless text: odd chunks start in the middle of a character.
        res.write(ZH.subarray(i % 2, (i % 2) + 7));
        await sleep(2);
      }
    },
    '/bytes': (_req, res) => void res.writeHead(200).end('b'.repeat(800)),
  });
});
afterAll(() => server.close());

const bounds = (maxChars: number, budget = createAnswerBudget(1024 * 1024), signal = new AbortController().signal) => ({ maxChars, budget, tenant: '', signal });

test('text split mid-character across chunks is decoded whole, within the cap', async () => {
  const response = await undiciFetch(`${server.url}/split`, { method: 'POST' });
  expect(await readCapped(response, 4096, tooLarge, decoderFor(response), bounds(40))).toBe('ж'.repeat(40));
});

test('past maxChars the read stops and the body is cancelled; the text is longer than the cap, with no broken character', async () => {
  const budget = createAnswerBudget(1024 * 1024);
  const response = await undiciFetch(`${server.url}/endless`, { method: 'POST' });
  const text = await readCapped(response, 1024 * 1024, tooLarge, decoderFor(response), bounds(15, budget));
  expect(text.length).toBeGreaterThan(15);
  expect(text).toBe('ж'.repeat(text.length));
  await endlessClosed; // the server saw the download stop (it would go on for ~4 s)
  expect(budget.inUse()).toBe(0);
});

test('past maxBytes with the text still within maxChars, the caller\'s error is thrown', async () => {
  const response = await undiciFetch(`${server.url}/split`, { method: 'POST' });
  await expect(readCapped(response, 30, tooLarge, decoderFor(response), bounds(1000))).rejects.toThrow('too large');
});

test('a read whose chunk would pass the budget waits for the older read to end, then goes on', async () => {
  const budget = createAnswerBudget(1000);
  const older = budget.open();
  expect(older.take(900, new AbortController().signal)).toBeUndefined();
  const response = await undiciFetch(`${server.url}/bytes`, { method: 'POST' });
  let done = false;
  const read = readCapped(response, 4096, tooLarge, decoderFor(response), bounds(1000, budget)).then((text) => ((done = true), text));
  await sleep(200);
  expect(done).toBe(false);
  older.close();
  expect(await read).toBe('b'.repeat(800));
  expect(budget.inUse()).toBe(0);
});

test('a wait for the budget ends with its call (the abort reason), giving back what the read held', async () => {
  const budget = createAnswerBudget(1000);
  const older = budget.open();
  older.take(900, new AbortController().signal);
  const controller = new AbortController();
  const response = await undiciFetch(`${server.url}/bytes`, { method: 'POST' });
  const read = readCapped(response, 4096, tooLarge, decoderFor(response), bounds(1000, budget, controller.signal));
  await sleep(100);
  controller.abort(new Error('the tool timed out'));
  await expect(read).rejects.toThrow('the tool timed out');
  expect(budget.inUse()).toBe(900);
  older.close();
  expect(budget.inUse()).toBe(0);
});

test('the oldest open read never waits, so reads holding the whole budget cannot wait for each other', async () => {
  const budget = createAnswerBudget(100);
  const signal = new AbortController().signal;
  const [a, b] = [budget.open(), budget.open()];
  expect(a.take(60, signal)).toBeUndefined();
  expect(b.take(40, signal)).toBeUndefined();
  const bWaits = b.take(10, signal);
  expect(bWaits).toBeInstanceOf(Promise);
  // a is the oldest: it goes past the budget rather than wait for b, which waits for a.
  expect(a.take(10, signal)).toBeUndefined();
  expect(budget.inUse()).toBe(110);
  let bGranted = false;
  void bWaits!.then(() => (bGranted = true));
  a.close();
  await bWaits;
  expect(bGranted).toBe(true);
  expect(budget.inUse()).toBe(50);
  b.close();
  expect(budget.inUse()).toBe(0);
});
