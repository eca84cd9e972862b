import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { watchTokensFile } from '../../src/auth';
import { SILENT_LOGGER } from '../../src/log';
import { until } from '../helpers/until';
import { tokenEntriesYaml, type TestToken } from './support/auth-app';

// A tokens file rewritten in place (`cat new.yaml > tokens.yaml`, an editor saving; not a Secret
// mount, which swaps a symlink) is empty or cut for a moment. A check that read it then took every
// token away: each call UNAUTHENTICATED until the next check, 2 s later by default.

const A: TestToken = { token: 'a-token-11aa', tenant: 'team-a', scopes: ['dispatch'] };
const B: TestToken = { token: 'b-token-22bb', tenant: 'team-b', scopes: ['dispatch'] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'dispatch-tokens-rewrite-'));
  file = path.join(dir, 'tokens.yaml');
  writeFileSync(file, tokenEntriesYaml([A]));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a tokens file truncated and then written again is never taken while empty', async () => {
  const seen: number[] = [];
  const stop = watchTokensFile(file, (entries) => seen.push(entries.length), { intervalMs: 20, settleMs: 100, logger: SILENT_LOGGER });
  try {
    await sleep(100);
    writeFileSync(file, '');
    // Checks see it empty meanwhile (before, the first of them took no tokens at all).
    await sleep(60);
    writeFileSync(file, tokenEntriesYaml([A, B]));
    await until(() => (seen.at(-1) === 2 ? true : undefined), 'the rewritten tokens', 3_000);
    expect(seen).toEqual([2]);
  } finally {
    stop();
  }
});

test('a tokens file emptied on purpose is taken once it holds still: nobody gets in', async () => {
  const seen: number[] = [];
  const stop = watchTokensFile(file, (entries) => seen.push(entries.length), { intervalMs: 20, settleMs: 100, logger: SILENT_LOGGER });
  try {
    await sleep(100);
    writeFileSync(file, '');
    await until(() => (seen.length > 0 ? true : undefined), 'the emptied file', 3_000);
    expect(seen).toEqual([0]);
  } finally {
    stop();
  }
});
