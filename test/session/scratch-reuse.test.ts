import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { BuiltinTool } from '../../src/executors';
import { createScratchDirs, type ScratchDirs } from '../../src/session';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// A session id used again after EndSession gets a new, empty directory: the name of a session's
// directory is its hash and random characters chosen when it is first made, forgotten at its end,
// so a call of the ended session still holding the old path writes into a removed directory.

let base: string;
const open: ScratchDirs[] = [];
const scratch = () => {
  const dirs = createScratchDirs({ dir: base });
  open.push(dirs);
  return dirs;
};

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-reuse-'));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((dirs) => dirs.close()));
  rmSync(base, { recursive: true, force: true });
});

test("a removed session's next directory is another, empty one; the old path stays removed", async () => {
  const dirs = scratch();
  const old = await dirs.get('acme', 'demo');
  writeFileSync(join(old, 'before.txt'), 'data');
  await dirs.remove('acme', 'demo');
  const fresh = await dirs.get('acme', 'demo');
  expect(fresh).not.toBe(old);
  expect(() => writeFileSync(join(old, 'late.txt'), 'data')).toThrow(/ENOENT/);
  expect(readdirSync(fresh)).toEqual([]);
  expect(existsSync(old)).toBe(false);
  // Named by a hash and random characters, never by the session's text; private.
  for (const dir of [old, fresh]) expect(basename(dir)).toMatch(/^[0-9a-f]{32}-[0-9a-f]{16}$/);
  expect(basename(fresh).slice(0, 32)).toBe(basename(old).slice(0, 32));
  expect(lstatSync(fresh).mode & 0o777).toBe(0o700);
  // Until the session ends, it keeps its directory; the end removes the new one too.
  expect(await dirs.get('acme', 'demo')).toBe(fresh);
  await dirs.remove('acme', 'demo');
  expect(existsSync(fresh)).toBe(false);
});

describe('through EndSession', () => {
  let d: TestDispatch;
  let release: () => void = () => undefined;
  let holding: () => void = () => undefined;
  /** Asks for its directory, says so and waits for `release` when `hold`, then writes `write` and lists the directory. */
  const scr: BuiltinTool = async (args, ctx) => {
    const { hold, write } = args as { hold?: boolean; write?: string };
    const dir = await ctx.scratchDir();
    if (hold) {
      const released = new Promise<void>((resolve) => (release = resolve));
      holding();
      await released;
    }
    let wrote = 'no';
    if (write !== undefined) {
      try {
        writeFileSync(join(dir, write), 'x');
        wrote = 'yes';
      } catch (error) {
        wrote = (error as NodeJS.ErrnoException).code ?? 'error';
      }
    }
    // The directory by a hash of its path: a built-in's output has the session's own path written <scratch>.
    return JSON.stringify({ dir: createHash('sha256').update(dir).digest('hex'), wrote, files: existsSync(dir) ? readdirSync(dir) : null });
  };

  beforeEach(async () => {
    d = await startDispatch(`tools:\n  - name: scr\n    effect: read_only\n    skip_memoize: true\n    timeout_ms: 20000\n    builtin: { name: scr }\n`, { builtins: new Map([['scr', scr]]), scratch: scratch() });
  });
  afterEach(async () => {
    release();
    await d.close();
  });

  const call = async (sessionId: string, args: object) => {
    const [result] = (await d.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name: 'scr', arguments: JSON.stringify(args) }] })).results;
    expect(result!.isError).toBe(false);
    return JSON.parse(result!.output) as { dir: string; wrote: string; files: string[] | null };
  };

  test("a call still running at EndSession cannot write into the session's next directory", async () => {
    const held = new Promise<void>((resolve) => (holding = resolve));
    const running = call('s2', { hold: true, write: 'from_old_call' });
    await held;
    await d.dispatch.endSession({ sessionId: 's2' });
    const fresh = await call('s2', {});
    expect(fresh.files).toEqual([]);
    release();
    const old = await running;
    expect(old.dir).not.toBe(fresh.dir);
    expect(old.wrote).toBe('ENOENT');
    expect((await call('s2', {})).files).toEqual([]);
  });
});
