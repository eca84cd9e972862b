import { createReconnectBackoff } from '../../src/executors/mcp/mcp-backoff';

// A call can be answered on a connection before the connection counts as up (its tools still being
// listed: `connected` is true from the handshake on). That proof was lost when `up` came after it:
// the next drop kept the grown delay (1.6 s where ~200 ms was due), as a loaded full run showed
// (test/mcp/mcp-hostile-server.test.ts, "a successful call resets the backoff ...").

test('a call answered before the connection counted as up still restarts the delays at its drop', () => {
  const backoff = createReconnectBackoff(100, 10_000);
  for (let i = 0; i < 3; i++) backoff.next();
  backoff.answered();
  backoff.up();
  backoff.down();
  expect(backoff.next()).toBeLessThanOrEqual(120);
});

test('a connection that answered nothing and lived less than reconnect_max_ms keeps the delays growing', () => {
  const backoff = createReconnectBackoff(100, 10_000);
  for (let i = 0; i < 3; i++) backoff.next();
  backoff.up();
  backoff.down();
  expect(backoff.next()).toBeGreaterThanOrEqual(800);
});

test('a drop for abuse after an answered call waits as after one such drop', () => {
  const backoff = createReconnectBackoff(100, 10_000);
  for (let i = 0; i < 3; i++) {
    backoff.up();
    backoff.down();
    backoff.abused();
    backoff.next();
  }
  backoff.up();
  backoff.answered();
  backoff.down();
  backoff.abused();
  const delay = backoff.next();
  expect(delay).toBeGreaterThanOrEqual(200);
  expect(delay).toBeLessThanOrEqual(240);
});
