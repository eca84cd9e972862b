// dispatchd's environment read strictly: whole milliseconds, a log level in any case (an unknown
// one refused), and a warning for DISPATCH_* names it does not know (a misspelt one did nothing).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAEMON_ENV, unknownDaemonEnv } from '../../src/cli/dispatchd-env';
import { parseDaemonOptions, USAGE } from '../../src/cli/dispatchd-options';
import { createLogger, logLevelFromEnv } from '../../src/log/logger';
import { runDaemon, startDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';

describe('--grace and DISPATCH_GRACE_MS', () => {
  it.each([
    [['--grace', '0x10'], {}, '--grace', '"0x10"'],
    [['--grace', '1e3'], {}, '--grace', '"1e3"'],
    [[], { DISPATCH_GRACE_MS: '+5' }, 'DISPATCH_GRACE_MS', '"+5"'],
    [[], { DISPATCH_GRACE_MS: ' ' }, 'DISPATCH_GRACE_MS', '" "'],
    [[], { DISPATCH_GRACE_MS: '10 ' }, 'DISPATCH_GRACE_MS', '"10 "'],
  ])('refuses %j %j, naming where it came from', (argv, env, source, shown) => {
    expect(() => parseDaemonOptions(argv, env)).toThrow(`${source} must be a non-negative integer of milliseconds, got ${shown}`);
  });

  it('takes decimal digits', () => {
    expect(parseDaemonOptions(['--grace', '0'], {}).graceMs).toBe(0);
    expect(parseDaemonOptions([], { DISPATCH_GRACE_MS: '2500' }).graceMs).toBe(2500);
  });
});

describe('DISPATCH_LOG_LEVEL', () => {
  it('names a level in any case; unset or empty is info', () => {
    expect(logLevelFromEnv({ DISPATCH_LOG_LEVEL: 'DEBUG' })).toBe('debug');
    expect(logLevelFromEnv({ DISPATCH_LOG_LEVEL: 'Warn' })).toBe('warn');
    expect(logLevelFromEnv({ DISPATCH_LOG_LEVEL: '' })).toBe('info');
    expect(logLevelFromEnv({})).toBe('info');
  });

  it.each(['verbose', 'constructor', 'debug '])('refuses %j', (value) => {
    expect(() => logLevelFromEnv({ DISPATCH_LOG_LEVEL: value })).toThrow(`DISPATCH_LOG_LEVEL must be debug, info, warn, error (in any case), got ${JSON.stringify(value)}`);
  });

  it('sets a default logger in any case, and an unknown one logs at info with one warning', () => {
    const saved = process.env.DISPATCH_LOG_LEVEL;
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const lines: string[] = [];
      const write = (line: string) => lines.push(line) > 0;
      process.env.DISPATCH_LOG_LEVEL = 'DEBUG';
      createLogger(undefined, write).debug('seen');
      process.env.DISPATCH_LOG_LEVEL = 'verbos';
      const a = createLogger(undefined, write);
      createLogger(undefined, write);
      a.debug('not seen');
      a.info('info seen');
      expect(lines.map((line) => (JSON.parse(line) as { message: string }).message)).toEqual(['seen', 'info seen']);
      expect(stderr.mock.calls).toEqual([['DISPATCH_LOG_LEVEL must be debug, info, warn, error (in any case), got "verbos"; logging at info\n']]);
    } finally {
      stderr.mockRestore();
      if (saved === undefined) delete process.env.DISPATCH_LOG_LEVEL;
      else process.env.DISPATCH_LOG_LEVEL = saved;
    }
  });

  it('dispatchd refuses to start with an unknown level', async () => {
    const run = await runDaemon(['--listen', '127.0.0.1:0'], { DISPATCH_LOG_LEVEL: 'verbose' });
    expect(failedStart(run, { only: true })).toEqual({ exit: 2, level: 'error', code: 'invalid_setting', message: 'dispatchd: DISPATCH_LOG_LEVEL must be debug, info, warn, error (in any case), got "verbose"' });
  });
});

describe('DISPATCH_* names dispatchd does not read', () => {
  it('are the ones neither dispatchd nor its clients know', () => {
    expect(unknownDaemonEnv({ DISPATCH_REDIS: 'redis://x', DISPATCH_LISTEN: '127.0.0.1:0', DISPATCH_TOKEN: 't', DISPATCH_ADDRESS: 'a', DISPATCH_CONFG: 'f', PATH: '/bin' })).toEqual(['DISPATCH_CONFG', 'DISPATCH_REDIS']);
    // The Python examples' TLS switch (examples/python/README.md) is a client's.
    expect(unknownDaemonEnv({ DISPATCH_TLS: '1', DISPATCH_TLS_CA: 'ca.pem' })).toEqual([]);
  });

  it('are each described in the usage text and the README', () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    expect(DAEMON_ENV.filter((name) => !USAGE.includes(name))).toEqual([]);
    expect(DAEMON_ENV.filter((name) => !readme.includes(name))).toEqual([]);
  });

  it('are warned about once at start', async () => {
    const daemon = await startDaemon([], { DISPATCH_REDIS: 'redis://127.0.0.1:1', DISPATCH_LOG_LEVEL: 'DEBUG' });
    try {
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);
      const warnings = daemon.stderr().split('\n').filter((line) => line.includes('unrecognised DISPATCH_*'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn', names: ['DISPATCH_REDIS'], known: DAEMON_ENV });
    } finally {
      daemon.child.kill('SIGKILL');
    }
  });
});

describe('an error names the flag or the variable that gave the value', () => {
  const cert = ['--tls-cert', 'c.pem', '--tls-key', 'k.pem'];
  it.each([
    [[], { DISPATCH_LISTEN: '127.0.0.1:x' }, 'DISPATCH_LISTEN must be HOST:PORT with a port from 0 to 65535, got "127.0.0.1:x"'],
    [['--listen', '127.0.0.1:x'], { DISPATCH_LISTEN: '127.0.0.1:0' }, '--listen must be HOST:PORT with a port from 0 to 65535, got "127.0.0.1:x"'],
    [[], { DISPATCH_TLS_CERT: 'c.pem' }, 'DISPATCH_TLS_CERT is set without --tls-key (or DISPATCH_TLS_KEY): the certificate and its key are given together'],
    [['--tls-key', 'k.pem'], {}, '--tls-key is set without --tls-cert (or DISPATCH_TLS_CERT): the certificate and its key are given together'],
    [[], { DISPATCH_TLS_CA: 'ca.pem' }, 'DISPATCH_TLS_CA needs --tls-cert and --tls-key (or DISPATCH_TLS_CERT and DISPATCH_TLS_KEY): without them'],
    [cert, { DISPATCH_TLS_REFRESH_MS: '0' }, 'DISPATCH_TLS_REFRESH_MS must be an integer from 1 to 86400000 milliseconds, got "0"'],
    [[], { DISPATCH_METRICS_LISTEN: 'metrics' }, 'DISPATCH_METRICS_LISTEN must be HOST:PORT with a port from 0 to 65535, got "metrics"'],
    [['--metrics-listen', '127.0.0.1:99999'], {}, '--metrics-listen must be HOST:PORT with a port from 0 to 65535, got "127.0.0.1:99999"'],
    [[], { DISPATCH_STATS_FLUSH_MS: 'abc' }, 'DISPATCH_STATS_FLUSH_MS must be an integer from 10 to 3600000, got "abc"'],
  ])('%j %j', (argv, env, message) => {
    expect(() => parseDaemonOptions(argv, env)).toThrow(message);
  });

  it('records the sources, for errors found later (a TLS file that cannot be read)', () => {
    expect(parseDaemonOptions(['--tls-cert', 'c.pem'], { DISPATCH_TLS_KEY: 'k.pem', DISPATCH_TLS_CA: '' }).sources).toEqual({ 'tls-cert': '--tls-cert', 'tls-key': 'DISPATCH_TLS_KEY' });
  });
});

describe('DISPATCH_INSECURE', () => {
  it.each(['1', 'true', 'TRUE', 'yes', 'On'])('%j turns it on (only "1" did)', (value) => {
    expect(parseDaemonOptions([], { DISPATCH_INSECURE: value }).insecure).toBe(true);
  });

  it.each(['0', 'false', 'No', 'OFF', ''])('%j leaves it off', (value) => {
    expect(parseDaemonOptions([], { DISPATCH_INSECURE: value }).insecure).toBe(false);
  });

  it.each(['maybe', 'enabled', ' 1'])('%j is refused (it was silently off)', (value) => {
    expect(() => parseDaemonOptions([], { DISPATCH_INSECURE: value })).toThrow(`DISPATCH_INSECURE must be one of 1, true, yes, on (on) or 0, false, no, off (off), in any case, got ${JSON.stringify(value)}`);
  });

  it('--insecure wins', () => {
    expect(parseDaemonOptions(['--insecure'], { DISPATCH_INSECURE: 'false' }).insecure).toBe(true);
  });
});

describe('--metrics-listen beyond loopback', () => {
  const warningsOf = async (metricsListen: string) => {
    const daemon = await startDaemon(['--metrics-listen', metricsListen]);
    try {
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);
      return daemon.stderr().split('\n').filter((line) => line.includes('metrics endpoint listens beyond loopback'));
    } finally {
      daemon.child.kill('SIGKILL');
    }
  };

  it('is warned about at start: the endpoint has no authentication and shows tenant and tool names', async () => {
    const warnings = await warningsOf('0.0.0.0:0');
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn', metricsListen: '0.0.0.0:0' });
    expect(warnings[0]).toContain("every tenant's name and their tool names");
  });

  it('is not warned about on loopback', async () => {
    expect(await warningsOf('127.0.0.1:0')).toEqual([]);
  });
});
