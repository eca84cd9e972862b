// YAML aliases the yaml library refuses only when it builds the value (an alias to no anchor, an
// anchor expanded too often: billion laughs) are config errors like any other: file, line and
// what is wrong, never the alias's text. Before, they escaped as a ReferenceError: dispatchd
// printed a stack trace with no file, and an unquoted value starting with `*` (an API key
// `*kJ8...`) was echoed whole, as the "alias" name, into stderr and the pod's logs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTokensFile } from '../../src/auth';
import { ConfigError, parseConfig } from '../../src/config';

const thrown = (work: () => unknown): unknown => {
  try {
    work();
  } catch (error) {
    return error;
  }
  return 'accepted';
};

test('an unquoted secret starting with * is a config error at its line, not echoed', () => {
  const error = thrown(() => parseConfig('mcp_servers:\n  - name: files\n    url: http://mcp.internal/\n    headers:\n      x-api-key: *kJ8-SECRET-9f3\n', 'dispatch.yaml'));
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toBe('dispatch.yaml: line 5, column 18: an alias (*...) names no anchor (&...) set before it; put a value starting with * in quotes');
  expect((error as Error).message).not.toContain('SECRET');
});

test('an anchor expanded past the alias budget (billion laughs) is a config error naming the file', () => {
  const levels = ['  a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) levels.push(`  a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
  const error = thrown(() => parseConfig(`telemetry:\n${levels.join('\n')}\n`, 'dispatch.yaml'));
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(/^dispatch\.yaml: aliases expand to too many copies of an anchor/);
});

test('a tokens file with an alias to no anchor is a config error naming the file and line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-token-alias-'));
  try {
    const file = join(dir, 'tokens.yaml');
    writeFileSync(file, '- tenant: team-a\n  scopes: [dispatch]\n  sha256: *c0ffee\n');
    const error = thrown(() => readTokensFile(file));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(`${file}: line 3, column 11: an alias (*...) names no anchor (&...) set before it; put a value starting with * in quotes`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
