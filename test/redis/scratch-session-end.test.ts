import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { dirname, join, sep } from 'node:path';
import type { BuiltinTool } from '../../src/executors';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startApp } from '../helpers/servers';

// A session's scratch directory is on the replica whose call made it; EndSession may be answered
// by any replica sharing the Redis, and every replica removes its own directory of the session.
// Each replica here has a temp directory of its own, as replicas on different hosts or pods do.

type TestApp = Awaited<ReturnType<typeof startApp>>;

// The module object the sources call (an `import * as` here would be a copy a spy does not reach).
const os = require('node:os') as typeof import('node:os');

let redis: TestRedis;
const apps: TestApp[] = [];
const temps: string[] = [];
/** Writes `file` (when given) into the session's scratch directory; answers the directory. */
const scratchTool: BuiltinTool = async (args, ctx) => {
  const dir = await ctx.scratchDir();
  const { file } = args as { file?: string };
  if (file !== undefined) writeFileSync(join(dir, file), 'data');
  // Its segments, so the test reads the real path: a built-in's output names its session's directory <scratch>.
  return JSON.stringify(dir.split(sep));
};
const start = async () => {
  const temp = mkdtempSync(join(os.tmpdir(), 'replica-'));
  temps.push(temp);
  const tmpdir = jest.spyOn(os, 'tmpdir').mockReturnValue(temp);
  try {
    const app = await startApp(`tools:\n  - name: scratch\n    effect: read_only\n    builtin: { name: scratch }\n`, {
      redisUrl: redis.url,
      pipeline: { builtins: new Map([['scratch', scratchTool]]) },
    });
    apps.push(app);
    return app;
  } finally {
    tmpdir.mockRestore();
  }
};
const scratchDir = async (app: TestApp, sessionId: string, file?: string) => {
  const result = (await app.dispatch.dispatch({ sessionId, calls: [{ id: 'c', name: 'scratch', arguments: JSON.stringify(file === undefined ? {} : { file }) }] })).results[0]!;
  expect(result.isError).toBe(false);
  return (JSON.parse(result.output) as string[]).join(sep);
};

beforeAll(async () => {
  redis = await startRedis({ own: true });
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await redis.close();
});

test('EndSession answered by another replica removes the directory on the replica that made it', async () => {
  const a = await start();
  const b = await start();
  const onA = await scratchDir(a, 'shared', 'work.txt');
  const other = await scratchDir(a, 'other', 'work.txt');
  await b.dispatch.endSession({ sessionId: 'shared' });
  for (let i = 0; i < 40 && existsSync(onA); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(existsSync(onA)).toBe(false);
  expect(readdirSync(other)).toEqual(['work.txt']);
});

test("EndSession on the replica itself removes it before answering, once: the session's next directory (another) stays; close removes the root", async () => {
  const a = await start();
  const dir = await scratchDir(a, 's', 'old.txt');
  await a.dispatch.endSession({ sessionId: 's' });
  expect(existsSync(dir)).toBe(false);
  const next = await scratchDir(a, 's', 'new.txt');
  expect(next).not.toBe(dir);
  expect(dirname(next)).toBe(dirname(dir));
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(readdirSync(next)).toEqual(['new.txt']);
  await apps.splice(0)[0]!.close();
  expect(existsSync(dirname(dir))).toBe(false);
});

test('EndSession that Redis does not answer in time answers UNAVAILABLE, but the directory is removed first: the end may have reached Redis', async () => {
  const a = await start();
  const dir = await scratchDir(a, 'frozen', 'work.txt');
  redis.signal('SIGSTOP');
  try {
    await expect(a.dispatch.endSession({ sessionId: 'frozen' })).rejects.toMatchObject({ code: status.UNAVAILABLE });
    expect(existsSync(dir)).toBe(false);
  } finally {
    redis.signal('SIGCONT');
  }
});
