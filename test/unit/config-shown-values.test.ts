// What a refusal shows of the value: a non-finite number by name (JSON wrote "null"), and a busy
// metrics port with the flag that asked for it (a bare "listen EADDRINUSE" named neither).
import { createServer, type AddressInfo } from 'node:net';
import { parseConfig } from '../../src/config';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { startApp } from '../helpers/servers';

test.each([
  ['.nan', 'NaN'],
  ['1e400', 'Infinity'],
  ['-.inf', '-Infinity'],
])('limits.max_calls_per_turn: %s is shown as %s', (yaml, shown) => {
  expect(() => parseConfig(`limits:\n  max_calls_per_turn: ${yaml}\n`, 'dispatch.yaml')).toThrow(`dispatch.yaml: limits.max_calls_per_turn: must be a positive integer, got ${shown}`);
});

describe('--metrics-listen on a busy port', () => {
  const busy = createServer();
  let address = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(busy.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('fails the app naming the flag', async () => {
    await expect(startApp('tools: []', { metricsListen: address })).rejects.toThrow(`--metrics-listen ${address}: listen EADDRINUSE: address already in use ${address}`);
  });

  it('makes dispatchd exit 1 naming the flag', async () => {
    const run = await runDaemon(['--listen', '127.0.0.1:0', '--metrics-listen', address]);
    expect(failedStart(run, { only: true })).toEqual({
      exit: 1,
      level: 'error',
      code: 'listen_failed',
      message: `dispatchd: cannot start: cannot listen on ${address} (from --metrics-listen): the address is already in use; stop what holds it, or choose another with --metrics-listen HOST:PORT or DISPATCH_METRICS_LISTEN`,
    });
  });
});
