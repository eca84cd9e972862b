import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';

// Found by a user probe: two config mistakes were refused without saying where to look: a bad
// redis.url in the file ("cannot start: bad Redis URL "nope"", no file or key), and a policy entry
// whose kind was misnamed in a way no near-miss catches (`action: alow`: "needs one of decide ...",
// not naming the key it held). The compiled dispatchd, as `npm test` builds it.

const dir = mkdtempSync(join(tmpdir(), 'config-sources-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test("a bad redis.url in the config file is named with the file and key", async () => {
  const path = file('redis.yaml', 'redis: { url: "nope" }\n');
  const failure = failedStart(await runDaemon(['--config', path, '--listen', '127.0.0.1:0']));
  expect(failure).toEqual({ exit: 1, level: 'error', code: 'invalid_redis_url', message: expect.stringContaining(`bad Redis URL "nope": not a URL`) });
  expect(failure.message).toContain(`(from ${path}: redis.url)`);
});

test('a policy entry of no kind names the keys it holds', async () => {
  const path = file('policy.yaml', 'policies:\n  - { match: echo, action: alow }\n');
  const run = await runDaemon(['--config', path, '--listen', '127.0.0.1:0']);
  expect(failedStart(run)).toEqual({
    exit: 1,
    level: 'error',
    code: 'invalid_config',
    message: expect.stringContaining(`${path}: policies[0]: needs one of decide (a rule), endpoint, breaker, after, concurrency, rate or budget; it holds "match", "action"`),
  });
});
