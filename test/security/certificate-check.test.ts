// What makes a certificate, key or CA bundle unusable, at start-up and on reload (the messages the
// operator reads), and the bounds of the refresh interval.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TLS_REFRESH_INTERVAL_MS, serverCredentials } from '../../src/auth';
import { caProblem, identityProblem } from '../../src/auth/certificate-check';
import { parseDaemonOptions } from '../../src/cli/dispatchd-options';
import { createTestPki, type TestPki } from './support/certificates';

let pki: TestPki;
let cert: Buffer;
let key: Buffer;
let ca: Buffer;
beforeAll(() => {
  pki = createTestPki();
  cert = readFileSync(pki.serverCert);
  key = readFileSync(pki.serverKey);
  ca = readFileSync(pki.ca);
});
afterAll(() => pki.remove());

const FILES = { cert: '/tls/tls.crt', key: '/tls/tls.key' };
const cutOff = (pem: Buffer) => pem.subarray(0, pem.length / 2);

test('a certificate and its key are usable; each way of being unusable names the file', () => {
  const other = readFileSync(pki.client('other', '/CN=other').key);
  expect(identityProblem(cert, key, FILES)).toBeUndefined();
  expect(identityProblem(Buffer.concat([cert, ca]), key, FILES)).toBeUndefined();
  expect(identityProblem(cert, other, FILES)).toBe('the private key in /tls/tls.key does not match the certificate in /tls/tls.crt');
  expect(identityProblem(cutOff(cert), key, FILES)).toBe('a certificate in /tls/tls.crt is cut off');
  expect(identityProblem(Buffer.concat([cert, cutOff(ca)]), key, FILES)).toBe('a certificate in /tls/tls.crt is cut off');
  expect(identityProblem(Buffer.from(''), key, FILES)).toBe('no PEM certificate in /tls/tls.crt');
  expect(identityProblem(Buffer.from('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n'), key, FILES)).toBe('a certificate in /tls/tls.crt does not parse');
  expect(identityProblem(cert, cutOff(key), FILES)).toBe('no usable private key in /tls/tls.key');
});

test('a CA bundle must hold whole certificates that parse (TLS itself would take garbage and refuse every client)', () => {
  expect(caProblem(ca, '/tls/ca.crt')).toBeUndefined();
  expect(caProblem(Buffer.concat([ca, cert]), '/tls/ca.crt')).toBeUndefined();
  expect(caProblem(Buffer.from('garbage'), '/tls/ca.crt')).toBe('no PEM certificate in /tls/ca.crt');
  expect(caProblem(Buffer.concat([ca, cutOff(cert)]), '/tls/ca.crt')).toBe('a certificate in /tls/ca.crt is cut off');
});

test('an unusable file stops start-up with the same message', () => {
  const garbageCa = join(pki.dir, 'garbage-ca.crt');
  writeFileSync(garbageCa, 'garbage');
  const otherKey = pki.client('other-key', '/CN=other').key;
  expect(() => serverCredentials({ cert: pki.serverCert, key: otherKey })).toThrow(`the private key in ${otherKey} does not match the certificate in ${pki.serverCert}`);
  expect(() => serverCredentials({ cert: pki.serverCert, key: pki.serverKey, ca: garbageCa })).toThrow(`no PEM certificate in ${garbageCa}`);
  expect(() => serverCredentials({ cert: pki.serverCert, key: pki.serverKey, ca: '/nonexistent/ca.crt' })).toThrow('cannot read --tls-ca /nonexistent/ca.crt (ENOENT)');
});

test('the refresh interval: a minute by default, --tls-refresh-ms or DISPATCH_TLS_REFRESH_MS, from 1 ms to a day', () => {
  const tls = ['--tls-cert', 'c', '--tls-key', 'k'];
  expect(DEFAULT_TLS_REFRESH_INTERVAL_MS).toBe(60_000);
  expect(parseDaemonOptions(tls, {}).tls?.refreshIntervalMs).toBe(60_000);
  expect(parseDaemonOptions([...tls, '--tls-refresh-ms', '250'], { DISPATCH_TLS_REFRESH_MS: '9' }).tls?.refreshIntervalMs).toBe(250);
  expect(parseDaemonOptions(tls, { DISPATCH_TLS_REFRESH_MS: '86400000' }).tls?.refreshIntervalMs).toBe(86_400_000);
  // Decimal digits only, as every time flag (Number() read "0x10" as 16, " 5000" as 5000, "1e3" as 1000).
  for (const bad of ['0', '1.5', 'soon', '86400001', '0x10', ' 5000', '1e3']) {
    expect(() => parseDaemonOptions([...tls, '--tls-refresh-ms', bad], {})).toThrow(`--tls-refresh-ms must be an integer from 1 to 86400000 milliseconds, got ${JSON.stringify(bad)}`);
  }
  expect(() => serverCredentials({ cert: pki.serverCert, key: pki.serverKey, refreshIntervalMs: 0 })).toThrow('--tls-refresh-ms must be an integer from 1 to 86400000 milliseconds, got 0');
});
