import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../../src/config';
import { parseMcpServers } from '../../src/executors/mcp';
import { runDaemon } from '../helpers/daemon';

const problem = (server: string) => {
  try {
    parseMcpServers(parseConfig(`mcp_servers: [ { name: a, command: [x], ${server} } ]`, 'dispatch.yaml').mcpServers, 'dispatch.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  return 'accepted';
};

// Node fires a timer longer than 2^31 - 1 ms after 1 ms, and an imported tool's timeout above
// 2^32 - 1 failed every ListTools (INTERNAL, "Error serializing response").
describe('mcp_servers timer keys', () => {
  it("refuses timeout_ms above 2^32 - 1 (each imported tool's 32-bit timeout; the pipeline holds its timers to 2^31 - 1), naming the key", () => {
    expect(problem('timeout_ms: 4294967295')).toBe('accepted');
    expect(problem('timeout_ms: 4294967296')).toBe(`dispatch.yaml: mcp_servers[0].timeout_ms: must be at most 4294967295 (milliseconds; it becomes each imported tool's timeout_ms, a 32-bit field), got 4294967296`);
  });

  it.each(['connect_timeout_ms', 'ping_timeout_ms', 'reconnect_wait_ms'])('refuses %s above 2^31 - 1, naming the key', (key) => {
    expect(problem(`${key}: 2147483647`)).toBe('accepted');
    expect(problem(`${key}: 2147483648`)).toBe(`dispatch.yaml: mcp_servers[0].${key}: must be at most 2147483647 (milliseconds; Node runs longer timers at once), got 2147483648`);
    expect(problem(`${key}: 5000000000`)).toBe(`dispatch.yaml: mcp_servers[0].${key}: must be at most 2147483647 (milliseconds; Node runs longer timers at once), got 5000000000`);
  });

  it.each(['reconnect_initial_ms', 'reconnect_max_ms'])('leaves room for the 20%% jitter in %s', (key) => {
    const both = (value: number) => `reconnect_initial_ms: ${key === 'reconnect_initial_ms' ? value : 1}, reconnect_max_ms: ${value}`;
    expect(problem(both(1789569705))).toBe('accepted');
    // 1789569705 * 1.2 is 2^31 - 2: the largest delay that still fits a timer.
    expect(Math.round(1789569705 * 1.2)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(problem(both(2000000000))).toBe(`dispatch.yaml: mcp_servers[0].${key}: must be at most 1789569705 (milliseconds; Node runs longer timers at once, and a reconnection delay gets up to 20% jitter added), got 2000000000`);
  });

  it('dispatchd refuses to start with a server timeout_ms of 5e9', async () => {
    const file = join(tmpdir(), `mcp-timeout-${process.pid}.yaml`);
    writeFileSync(file, 'mcp_servers:\n  - { name: r, command: [node, server.js], timeout_ms: 5000000000 }\n');
    const { code, stderr } = await runDaemon(['--listen', '127.0.0.1:0', '--config', file]);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`${file}: mcp_servers[0].timeout_ms: must be at most 4294967295`);
  });
});
