import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createPipeline } from '../../src/app';
import { SILENT_LOGGER } from '../../src/log';
import { createScratchDirs, type ScratchDirs } from '../../src/session';
import { createMemoryStore } from '../../src/store';

// A session's scratch directory goes when the session ends: before the store's endSession resolves
// on the replica that ends it, and also when the session's first call is still making it.

let base: string;
const open: ScratchDirs[] = [];
const scratch = () => {
  const dirs = createScratchDirs({ dir: base });
  open.push(dirs);
  return dirs;
};
/** Fills a directory with enough for its removal to take several turns of the event loop. */
const fill = (dir: string) => {
  for (let i = 0; i < 20; i++) {
    mkdirSync(join(dir, `d${i}`));
    for (let j = 0; j < 5; j++) writeFileSync(join(dir, `d${i}`, `f${j}`), 'data');
  }
};

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-end-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((dirs) => dirs.close()));
  rmSync(base, { recursive: true, force: true });
});

test("the store's endSession resolves once the session's directory is removed (the pipeline's listener is waited for)", async () => {
  const dirs = scratch();
  const deps = createPipeline({ scratch: dirs, store: createMemoryStore(), logger: SILENT_LOGGER });
  const dir = await dirs.get('t', 's');
  const other = await dirs.get('t', 'other');
  fill(dir);
  await deps.store.endSession({ tenant: 't', sessionId: 's' });
  expect(existsSync(dir)).toBe(false);
  expect(existsSync(other)).toBe(true);
});

test("a removal while the session's first get makes its directory fails that get and removes the directory once made", async () => {
  const dirs = scratch();
  const kept = await dirs.get('t', 'kept');
  const getting = dirs.get('t', 's');
  const removed = dirs.remove('t', 's');
  await expect(getting).rejects.toThrow('the session ended while its scratch directory was being made');
  await removed;
  // The root holds the kept directory and the owner file (`.owner`) alone.
  expect(readdirSync(dirname(kept)).sort()).toEqual(['.owner', basename(kept)]);
});

test('a get begun after the removal, while the first get still runs, waits for it and keeps its new directory', async () => {
  const dirs = scratch();
  const first = dirs.get('t', 's');
  const removed = dirs.remove('t', 's');
  const second = dirs.get('t', 's');
  await expect(first).rejects.toThrow('the session ended');
  await removed;
  const dir = await second;
  writeFileSync(join(dir, 'after.txt'), 'data');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(readdirSync(dir)).toEqual(['after.txt']);
  // And it is removed in its turn by the next end.
  await dirs.remove('t', 's');
  expect(existsSync(dir)).toBe(false);
});
