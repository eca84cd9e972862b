import * as grpc from '@grpc/grpc-js';
import { startWorkerApp, type WorkerApp } from './worker-app';
import { startWorker } from './worker-harness';

// A worker's hello naming a tool of 100,000 characters with another executor was refused quoting
// the name whole: a status over ~64 KB never reached the worker (found fuzzing). The name is quoted
// short, and the stream ends at once.

let t: WorkerApp;
beforeAll(async () => {
  t = await startWorkerApp();
});
afterAll(() => t.close());

it('ends the stream of a hello with a 100,000-character name and another executor INVALID_ARGUMENT, the name quoted short', async () => {
  const started = Date.now();
  const worker = startWorker(t.address, { id: 'w', tools: [{ name: 'n'.repeat(100_000), inputSchema: '{}', executor: { case: 'builtin', value: { name: 'echo' } } }] });
  const status = await worker.ended;
  expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(status.details).toBe(`tools[0] ("${'n'.repeat(200)}..."): a worker hosts its tools itself, so the executor must be worker or unset, not builtin`);
  expect(Date.now() - started).toBeLessThan(2_000);
});
