// An MCP tool whose timeout_ms is past 2^31-1 ms (the config and RegisterTools allow up to 2^32-1)
// is called: the SDK's timer of the request was given the whole timeout, which Node runs at once
// (TimeoutOverflowWarning), so every call failed TIMEOUT within milliseconds, after its request
// was sent. The timer is now at most MAX_TIMER_MS.
import { startApp } from '../helpers/servers';
import { stdioServerYaml } from './mcp-harness';

jest.setTimeout(30_000);

test('a tool with timeout_ms 4294967295 answers after 300 ms', async () => {
  const t = await startApp(`mcp_servers:\n  - ${stdioServerYaml('r', { timeout_ms: 4_294_967_295 })}\n`);
  try {
    const result = (await t.dispatch.dispatch({ sessionId: 's', calls: [{ id: 'c', name: 'r_slow', arguments: '{"ms":300}' }] })).results[0]!;
    expect(result.error).toBeUndefined();
    expect(result.output).toBe('slept 300');
  } finally {
    await t.close();
  }
});
