// Where examples/python/dispatch_stubs.py generates the stubs it imports: on another filesystem
// than the system temp directory, and never from a directory another user owns or can write.
import { spawnSync } from 'node:child_process';
import { chownSync, chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const PYTHON = '/usr/bin/python3';
const EXAMPLES = path.join(__dirname, '../../examples/python');
const hasGrpc = spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { stdio: 'ignore' }).status === 0;
const describeWithPython = hasGrpc ? describe : describe.skip;

const python = (code: string, env: NodeJS.ProcessEnv) => spawnSync(PYTHON, ['-c', code], { cwd: EXAMPLES, env: { ...process.env, DISPATCH_PY_STUBS: '', ...env }, encoding: 'utf8', timeout: 60_000 });

describeWithPython('dispatch_stubs.py', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'py-stub-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const shm = '/dev/shm';
  const otherFilesystem = existsSync(shm) && statSync(shm).dev !== statSync(tmpdir()).dev;
  (otherFilesystem ? it : it.skip)('generates into DISPATCH_PY_STUBS on another filesystem than the temp directory', () => {
    const stubs = mkdtempSync(path.join(shm, 'py-stubs-'));
    try {
      const target = path.join(stubs, 'nested', 'stubs');
      const run = python('import dispatch_stubs; s = dispatch_stubs.load(); print(s.dispatch_pb2.DESCRIPTOR.package)', { DISPATCH_PY_STUBS: target });
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('dispatch.v1\n');
      expect(existsSync(path.join(target, 'dispatch', 'v1', 'worker_pb2_grpc.py'))).toBe(true);
    } finally {
      rmSync(stubs, { recursive: true, force: true });
    }
  }, 60_000);

  /** The default stub directory under a temp directory of this test's own. */
  function defaultDirectory(name: string): { env: NodeJS.ProcessEnv; target: string } {
    const env = { TMPDIR: path.join(dir, name) };
    mkdirSync(env.TMPDIR, { mode: 0o755 });
    const run = python('import dispatch_stubs; print(dispatch_stubs._stub_dir())', env);
    return { env, target: run.stdout.trim() };
  }

  /** A complete-looking stub tree at `target` whose modules leave `marker` when imported. */
  function plant(target: string, marker: string): void {
    const v1 = path.join(target, 'dispatch', 'v1');
    mkdirSync(v1, { recursive: true });
    writeFileSync(path.join(target, 'dispatch', '__init__.py'), '');
    writeFileSync(path.join(v1, '__init__.py'), `open(${JSON.stringify(marker)}, "w").write("imported")\n`);
    for (const m of ['dispatch_pb2', 'dispatch_pb2_grpc', 'tool_pb2', 'registry_pb2', 'registry_pb2_grpc', 'worker_pb2', 'worker_pb2_grpc']) writeFileSync(path.join(v1, `${m}.py`), '');
  }

  it('creates the default directory private to the user (0700)', () => {
    const { env, target } = defaultDirectory('fresh');
    const run = python('import dispatch_stubs; dispatch_stubs.load()', env);
    expect(run.stderr).toBe('');
    expect(statSync(target).mode & 0o777).toBe(0o700);
  }, 60_000);

  it('refuses a default directory that is group- or world-writable, importing nothing from it', () => {
    const { env, target } = defaultDirectory('writable');
    const marker = path.join(dir, 'writable-marker');
    plant(target, marker);
    chmodSync(target, 0o777);
    const run = python('import dispatch_stubs; dispatch_stubs.load()', env);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`RuntimeError: refusing the stub directory ${target}: it is group- or world-writable (mode 777), so others could have put code there; remove it or set DISPATCH_PY_STUBS`);
    expect(existsSync(marker)).toBe(false);
  });

  const root = process.getuid?.() === 0;
  (root ? it : it.skip)('refuses a default directory another user owns, importing nothing from it', () => {
    const { env, target } = defaultDirectory('planted');
    const marker = path.join(dir, 'planted-marker');
    plant(target, marker);
    chmodSync(target, 0o755);
    chownSync(target, 65534, 65534);
    const run = python('import dispatch_stubs; dispatch_stubs.load()', env);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`RuntimeError: refusing the stub directory ${target}: it belongs to uid 65534, not to this user (uid 0), who could have put code there; remove it or set DISPATCH_PY_STUBS`);
    expect(existsSync(marker)).toBe(false);
    const cli = spawnSync(PYTHON, [path.join(EXAMPLES, 'dispatch_stubs.py')], { env: { ...process.env, DISPATCH_PY_STUBS: '', ...env }, encoding: 'utf8' });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toBe(`dispatch_stubs: refusing the stub directory ${target}: it belongs to uid 65534, not to this user (uid 0), who could have put code there; remove it or set DISPATCH_PY_STUBS\n`);
  });
});
