import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorKind } from '../../gen/dispatch/v1/dispatch_pb';
import { startDispatch, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';

// Which side of a side-effecting HTTP tool's execution a failure falls on, against real servers:
// a TLS handshake refused sends nothing (BEFORE: retried, no unknown outcome left behind); a
// connection reset mid-request may have done the work (DURING: the model is told so).

let tls: Server;
let received = 0;
let resets: ToolServer;
let d: TestDispatch;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'phases-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
  tls = createServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }, (_req, res) => {
    received++;
    res.end('charged');
  });
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  resets = await startToolServer({ '/pay': (_req, res) => void res.socket?.destroy() });
  d = await startDispatch(`
tools:
  - name: pay_tls
    effect: side_effect
    input_schema: '{"type":"object"}'
    retry: { initial_backoff_ms: 5 }
    http: { url: "https://127.0.0.1:${(tls.address() as AddressInfo).port}/pay" }
  - name: pay_reset
    effect: side_effect
    input_schema: '{"type":"object"}'
    http: { url: "${resets.url}/pay" }
`);
});
afterAll(async () => {
  await d.close();
  tls.close();
  await resets.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (name: string) => d.dispatch.dispatch({ sessionId: 'phases', calls: [{ id: 'c', name, arguments: '{"amount":5}' }] }).then((r) => r.results[0]!);

test('a certificate the client refuses: nothing sent, BEFORE (retried), and the same call is not OUTCOME_UNKNOWN after', async () => {
  const first = await call('pay_tls');
  expect(received).toBe(0);
  expect(first.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(first.error?.message).toContain('could not reach the tool');
  expect(first.attempts).toBe(2);
  const second = await call('pay_tls');
  expect(second.error?.kind).toBe(ErrorKind.UNAVAILABLE);
  expect(received).toBe(0);
});

test('a reset mid-request of a side-effecting tool tells the model the call may have taken effect', async () => {
  const result = await call('pay_reset');
  expect(resets.count('/pay')).toBe(1);
  const json = JSON.parse(result.output) as { suggestion: string; recoverable: boolean };
  expect(json.suggestion).toMatch(/may or may not have taken effect/);
  expect(json.recoverable).toBe(false);
});
