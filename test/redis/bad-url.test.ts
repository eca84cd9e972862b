import { runDaemon } from '../helpers/daemon';

test('dispatchd refuses a bad --redis URL at start, naming the accepted forms and hiding the password', async () => {
  const { code, stderr } = await runDaemon(['--listen', '127.0.0.1:0', '--redis', 'redis-sentinel://:hunter2@127.0.0.1:26379']);
  expect(code).toBe(1);
  expect(stderr).toContain('bad Redis URL "redis-sentinel://***@127.0.0.1:26379": the master name is missing (redis-sentinel://host:26379/MASTER) (expected redis://[:password@]host:port/db,');
  expect(stderr).not.toContain('hunter2');
});
