import { redactSecrets } from '../../src/middleware';
import { slowerThanLinear } from '../helpers/cpu-time';

// Found by probing with outputs as real tools print them: a certificate's body (public) was
// redacted line by line by the entropy step, so an agent reading a certificate or a CA bundle got
// it corrupted. The bodies of public PEM blocks (certificates, requests, CRLs, public keys,
// OpenPGP public keys and signatures) are now left to the patterns alone; a private key still goes.

const CERT = "-----BEGIN CERTIFICATE-----\nMIIC/zCCAeegAwIBAgIUWr5krrAqzr8byku0erdSn/TZVPEwDQYJKoZIhvcNAQEL\nBQAwDzENMAsGA1UEAwwEdGVzdDAeFw0yNjEyMDYxMDQzNDRaFw0yNjEyMDcxMDQz\nNDRaMA8xDTALBgNVBAMMBHRlc3QwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEK\nAoIBAQDJ3HkVnEpZ+Gni2rb4WRbkMTrkaiKY8PAc+mrOe8NBiCA+w6JRVDyUuzzA\nXvkRvkD+wXEqIiTrWGFXK3zuGPDJJVrG7fYjc357YrzZXeD5OmOGONqsUatRJO4I\nMVA7PJM7VAO1yGK7fj0xuGF8a7281gHFspAz+txEtd/JciBjrRwBZVTDPJkVQElz\n+/0tN8aB5h5F+i0tgdKnNjDcQ9KFpfSErG9uveR/k6ktjwusgJy4/IfbyT4zRgc5\nm8W5YyvkUKTsJeekge/EZmJg0xvJRSnth1M5nV63dqEEbTJ5UPHsDNemJD/6HBwp\neE41oNES115jRh2NeSeaoOtqC1ivAgMBAAGjUzBRMB0GA1UdDgQWBBQ1vKjMCg/s\n0B61IspLl+ojAN9JvTAfBgNVHSMEGDAWgBQ1vKjMCg/s0B61IspLl+ojAN9JvTAP\nBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQCDt5FSglUzRR9tam2b\nJz4UO/LtwM76yYUvBlYMc17XzqYC9AgHJBsmNRk2q6dvXSVxYo9Gp/uhcdSDUQlc\nkpkso2zeYINYXhs8EAsbMT0x/t9XWa6NGBWrG4CRCx6EaJ7ezHzd1ma8ajWE3GMI\nYxa2pqMP3KXr2aY9KE/q6F2e1714eru+eqSowUtzuT/aflYbo2WPPdeu8+ovZ5Cb\nnFRYoJFe3PeQam0cybVzx/AtgTw9aeqeVgEL5a86fwVynLzlZKK/fUO/+KvL6rQk\nYJ0YZXNWSa0Uar+DMXOmiC+oldyUrnuPu/qCuexS+3zL06NA7Csn0nQMHj1T1ZJN\nmxnb\n-----END CERTIFICATE-----";
const SECRET = 'Zq8xR2vL9mK4pT7wB3nC6yH1jF5dG0sA8eU2iO4';

test('a certificate, a chain and a public key stay whole', () => {
  expect(redactSecrets(CERT)).toBe(CERT);
  const chain = `depth=0 CN = test\n${CERT}\n---\n${CERT}\n`;
  expect(redactSecrets(chain)).toBe(chain);
  const json = JSON.stringify({ certificate: CERT });
  expect(redactSecrets(json)).toBe(json);
  const publicKey = CERT.replace(/CERTIFICATE/g, 'PUBLIC KEY');
  expect(redactSecrets(publicKey)).toBe(publicKey);
});

test('around them, and in a block with no END line, the entropy step still redacts', () => {
  expect(redactSecrets(`${SECRET}\n${CERT}\n${SECRET}`)).toBe(`[REDACTED:high_entropy]\n${CERT}\n[REDACTED:high_entropy]`);
  const cut = CERT.slice(0, CERT.indexOf('-----END'));
  expect(redactSecrets(cut)).toContain('[REDACTED:high_entropy]');
  const other = CERT.replace(/CERTIFICATE/g, 'SOMETHING ELSE');
  expect(redactSecrets(other)).toContain('[REDACTED:high_entropy]');
});

test('a private key beside a certificate is still redacted whole', () => {
  const key = '-----BEGIN PRIVATE KEY-----\n' + 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7'.repeat(3) + '\n-----END PRIVATE KEY-----';
  expect(redactSecrets(`${CERT}\n${key}`)).toBe(`${CERT}\n[REDACTED:private_key]`);
});

test('BEGIN lines with no END stay linear: a MiB of them in well under a second of CPU', () => {
  // Each BEGIN searched the rest of the text for its END: 8 s for this MiB.
  const text = '-----BEGIN CERTIFICATE-----\n'.repeat(40_000).slice(0, 1 << 20);
  redactSecrets(text.slice(0, 4096));
  expect(slowerThanLinear(text, redactSecrets, 500)).toBeUndefined();
});
