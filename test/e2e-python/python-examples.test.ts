import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { EventKind } from '../../gen/dispatch/v1/dispatch_pb';
import { buildApp } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { serveApp, startApp } from '../helpers/servers';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { until } from '../helpers/until';
import { describeWithPython, runPython, type RunningPython } from './python';

describeWithPython('the Python examples against a running dispatch', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  const stubDir = mkdtempSync(path.join(tmpdir(), 'py-stubs-'));
  const env = { DISPATCH_PY_STUBS: path.join(stubDir, 'stubs') };
  const workers: RunningPython[] = [];
  beforeAll(async () => {
    t = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await t.close();
    rmSync(stubDir, { recursive: true, force: true });
  });

  const backend = async (args: string[] = []) => {
    const run = runPython('backend.py', ['--address', t.address, ...args], env);
    const code = await run.exited;
    return { code, lines: run.out().trim().split('\n') };
  };
  const hosted = async () => (await t.registry.listTools({})).tools.some((x) => x.name === 'py_word_count');

  it('the worker hosts its tool and the backend dispatches a turn to it', async () => {
    const worker = runPython('worker.py', ['--address', t.address, '--id', 'py-1'], env);
    workers.push(worker);
    const deadline = Date.now() + 20_000;
    while (!(await hosted())) {
      if (Date.now() > deadline || worker.child.exitCode !== null) throw new Error(`the Python worker did not register: ${worker.out()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const { code, lines } = await backend();
    expect(code).toBe(0);
    expect(lines[0]).toBe('call_1 ok tool=echo attempts=1: {"text":"hello from python"}');
    expect(lines[1]).toBe('call_2 ok tool=py_word_count attempts=1: {"words": 4, "longest": "quick"}');
    expect(lines[2]).toMatch(/^call_3 error UNKNOWN_TOOL tool=ecko attempts=0: \{"error":true,"tool":"ecko","kind":"UNKNOWN_TOOL","message":"tool \\"ecko\\" not found; did you mean \\"echo\\"\?"/);
    expect(lines).toHaveLength(3);
    expect(worker.out()).toContain('completed py_word_count call=call_2 attempt=1 error=False');
  }, 60_000);

  it('the backend sends its own calls, and sees arguments validated against the worker schema', async () => {
    const calls = JSON.stringify([
      { id: 'a', name: 'py_word_count', arguments: '{"text": "one two"}' },
      { id: 'b', name: 'py_word_count', arguments: '{"text": 3}' },
    ]);
    const { code, lines } = await backend(['--calls', calls]);
    expect(code).toBe(0);
    expect(lines[0]).toBe('a ok tool=py_word_count attempts=1: {"words": 2, "longest": "one"}');
    expect(lines[1]).toMatch(/^b error INVALID_ARGUMENTS tool=py_word_count attempts=0: /);
  }, 60_000);

  it('the worker stops cleanly on SIGTERM, and the tool then fails BEFORE execution', async () => {
    const worker = workers[0]!;
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.out()).toContain('worker stopped');
    const { code, lines } = await backend(['--calls', JSON.stringify([{ id: 'x', name: 'py_word_count', arguments: '{"text": "a"}' }])]);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^x error UNAVAILABLE tool=py_word_count attempts=2: .*no worker is connected for tool \\"py_word_count\\"/);
  }, 60_000);
  it('the worker finds a connection gone half-open by its pings, and opens a new stream that serves again', async () => {
    // dispatchd's own pings at their default (30 s): only the worker's can notice here.
    const own = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
    const proxy = await startTcpProxy(Number(own.address.split(':')[1]));
    const worker = runPython('worker.py', ['--address', `127.0.0.1:${proxy.port}`, '--id', 'py-pinged'], { ...env, DISPATCH_KEEPALIVE_MS: '500', DISPATCH_KEEPALIVE_TIMEOUT_MS: '500' });
    workers.push(worker);
    const hosted = async () => (await own.registry.listTools({})).tools.some((x) => x.name === 'py_word_count');
    try {
      const deadline = Date.now() + 20_000;
      while (!(await hosted())) {
        if (Date.now() > deadline || worker.child.exitCode !== null) throw new Error(`the Python worker did not register: ${worker.out()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      proxy.freeze();
      const frozen = Date.now();
      // The worker's pings go unanswered; it opens a new connection, which the proxy forwards.
      while (!/stream ended \(UNAVAILABLE: .*\); a new one in \d+ ms/.test(worker.out())) {
        if (Date.now() - frozen > 20_000) throw new Error(`the Python worker did not notice the half-open connection: ${worker.out()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const noticedMs = Date.now() - frozen;
      expect(proxy.connections()).toBeGreaterThanOrEqual(1);
      let served = await own.dispatch.dispatch({ sessionId: 'p', calls: [{ id: 'p0', name: 'py_word_count', arguments: '{"text": "a b"}' }] });
      for (let i = 1; served.results[0]!.isError && Date.now() - frozen < 30_000; i++) {
        await new Promise((r) => setTimeout(r, 200));
        served = await own.dispatch.dispatch({ sessionId: 'p', calls: [{ id: `p${i}`, name: 'py_word_count', arguments: '{"text": "a b"}' }] });
      }
      expect(served.results[0]).toMatchObject({ isError: false, output: '{"words": 2, "longest": "a"}' });
      expect(proxy.connections()).toBeGreaterThanOrEqual(2);
      process.stdout.write(`python worker: half-open connection noticed after ${noticedMs} ms (pings every 500 ms, 500 ms to answer)\n`);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await proxy.close();
      await own.close();
    }
  }, 60_000);

  it('with pings on (the default, here every 200 ms), a call in flight while dispatchd shuts down gracefully finishes', async () => {
    const own = await startApp(readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8'));
    const events = own.dispatch.subscribe({ sessionId: 'py-drain' });
    const started = new Promise<void>((resolve) => events.on('data', (e: { kind: EventKind }) => e.kind === EventKind.TOOL_PRE && resolve()));
    events.on('error', () => undefined);
    let run: RunningPython | undefined;
    try {
      await new Promise((resolve) => events.once('metadata', resolve));
      const calls = JSON.stringify([{ id: 'd1', name: 'sleep', arguments: '{"ms": 1500}' }]);
      const backend = runPython('backend.py', ['--address', own.address, '--session', 'py-drain', '--calls', calls], { ...env, DISPATCH_KEEPALIVE_MS: '200', DISPATCH_KEEPALIVE_TIMEOUT_MS: '300' });
      run = backend;
      await started;
      // Several pings come due on the draining connection before the call ends.
      await own.server.shutdown(10_000);
      // The call's result line, ok or not, as the backend prints it; its EndSession afterwards, to
      // a server gone, takes seconds of retries before it exits, and is not what this is about.
      await until(() => /^d1 /m.test(backend.out()) || backend.child.exitCode !== null || undefined, 'the backend to print the call\'s result', 20_000);
      expect(backend.out()).toContain('d1 ok tool=sleep attempts=1: {"ms":1500}');
    } finally {
      run?.child.kill('SIGKILL');
      events.cancel();
      await own.close();
    }
  }, 60_000);

  it('the worker opens a new stream when dispatchd restarts, and its tool is served again', async () => {
    const tools = readFileSync(path.join(__dirname, '../../examples/tools.yaml'), 'utf8');
    let own = await startApp(tools);
    const address = own.address;
    const worker = runPython('worker.py', ['--address', address, '--id', 'py-kept'], env);
    workers.push(worker);
    const hostedOn = async (d: typeof own) => (await d.registry.listTools({})).tools.some((x) => x.name === 'py_word_count');
    const waitHosted = async (d: typeof own, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!(await hostedOn(d))) {
        if (Date.now() > deadline || worker.child.exitCode !== null) throw new Error(`the Python worker did not register ${what}: ${worker.out()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await waitHosted(own, 'at first');
      await own.close();
      // The same address again, as a restarted replica behind a Service.
      own = await serveApp(await buildApp(parseConfig(tools, 'examples/tools.yaml'), { logger: SILENT_LOGGER }), undefined, address);
      await waitHosted(own, 'on the restarted server');
      expect(worker.out()).toMatch(/stream ended \([A-Z_]+: .*\); a new one in \d+ ms/);
      const { results } = await own.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'k', name: 'py_word_count', arguments: '{"text": "still here"}' }] });
      expect(results[0]).toMatchObject({ isError: false, output: '{"words": 2, "longest": "still"}' });
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(worker.out()).toContain('worker stopped');
    } finally {
      await own.close();
    }
  }, 60_000);
});
