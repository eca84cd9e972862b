'use strict';
const { fork } = require('node:child_process');
const path = require('node:path');

/** Largest wait for a server child to start, in ms. */
const START_TIMEOUT_MS = 20_000;
/** Largest wait for a cpuUsage answer, in ms. */
const CPU_TIMEOUT_MS = 5_000;

/**
 * Forks a server child running `recipe` (a module exporting `start(options) -> {port, close}`),
 * resolves once it listens. `cpu()` reads the child's process.cpuUsage() in microseconds.
 * With `profileFile`, the child writes a V8 CPU profile of its measured time (from the first
 * `cpu()` read to `stop()`) there.
 */
function startServerProcess(recipe, options = {}, { profileFile } = {}) {
  const env = profileFile ? { ...process.env, BENCH_PROFILE_FILE: profileFile } : process.env;
  const child = fork(path.join(__dirname, 'server-child.js'), [require.resolve(recipe), JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env,
  });
  let nextId = 0;
  const waiting = new Map();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`server ${recipe} did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server ${recipe} exited with code ${code}`));
      for (const { fail } of waiting.values()) fail(new Error('server exited'));
    });
    child.on('message', (message) => {
      if (message.type === 'error') reject(new Error(message.message));
      if (message.type === 'cpu' || message.type === 'reply') waiting.get(message.id)?.done(message);
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve({
        port: message.port,
        address: `127.0.0.1:${message.port}`,
        /** Every port, when the recipe serves several (its `ports`). */
        ports: message.ports,
        pid: child.pid,
        cpu() {
          const id = nextId++;
          return new Promise((done, fail) => {
            const t = setTimeout(() => fail(new Error('no cpuUsage answer')), CPU_TIMEOUT_MS);
            waiting.set(id, {
              done: (m) => (clearTimeout(t), waiting.delete(id), done({ user: m.user, system: m.system, total: m.user + m.system, rss: m.rss })),
              fail,
            });
            child.send({ type: 'cpu', id });
          });
        },
        /** Sends `value` to the recipe's `onMessage` in the child; resolves with what it returns. */
        request(value) {
          const id = nextId++;
          return new Promise((done, fail) => {
            const t = setTimeout(() => fail(new Error('no answer from the server')), CPU_TIMEOUT_MS);
            waiting.set(id, { done: (m) => (clearTimeout(t), waiting.delete(id), done(m.value)), fail });
            child.send({ type: 'request', id, value });
          });
        },
        stop() {
          return new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.send({ type: 'stop' });
            setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
          });
        },
      });
    });
  });
}

module.exports = { startServerProcess };
