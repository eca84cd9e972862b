import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// Found by following examples/python/README.md with the `python3` first on PATH, which had no
// grpcio: backend.py died with a bare ModuleNotFoundError traceback and dispatch_stubs.py with a
// CalledProcessError. `-S` leaves out site-packages, where Debian's python3-grpcio lives.

test.each(['backend.py', 'worker.py', 'dispatch_stubs.py'])('%s without grpcio says what to install, with no traceback', (script) => {
  const run = spawnSync('/usr/bin/python3', ['-S', join(__dirname, '../../examples/python', script), '--help'], { encoding: 'utf8', timeout: 20_000 });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain("No module named 'grpc': the dispatch examples need grpcio and grpcio-tools");
  expect(run.stderr).toContain('/usr/bin/python3');
  expect(run.stderr).not.toContain('Traceback');
});
