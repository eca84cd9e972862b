import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Test PKI made with openssl in a temp dir: a CA, a server certificate for localhost, client certificates. */
export interface TestPki {
  readonly dir: string;
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  /** Issues a client certificate with `subject` (e.g. `/CN=team-a/O=acme`), signed by `ca` (default this CA). */
  client(name: string, subject: string, signer?: { cert: string; key: string }): { cert: string; key: string };
  /**
   * Issues a certificate for localhost and 127.0.0.1 (or `altNames`, e.g. `DNS:localhost` alone)
   * that serves as client and server both (a Redis Cluster node's: its cluster bus connects with
   * it, and the other node requires it).
   */
  peer(name: string, altNames?: string): { cert: string; key: string };
  /** A second, unrelated CA. */
  otherCa(): { cert: string; key: string };
  remove(): void;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

function selfSigned(dir: string, name: string, subject: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', subject, '-keyout', key, '-out', cert, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { cert, key };
}

function issue(dir: string, name: string, subject: string, signer: { cert: string; key: string }, ext: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, ext);
  // -utf8: a subject's non-ASCII characters are read as UTF-8 (a tenant name holding U+202E), not byte by byte.
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-utf8', '-subj', subject, '-keyout', key, '-out', csr]);
  openssl(['x509', '-req', '-in', csr, '-CA', signer.cert, '-CAkey', signer.key, '-CAcreateserial', '-days', '2', '-extfile', extFile, '-out', cert]);
  return { cert, key };
}

/** Creates the PKI (needs the openssl binary); `caName` is its CA's common name. */
export function createTestPki(caName = 'dispatch test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-pki-'));
  const ca = selfSigned(dir, 'ca', `/CN=${caName}`);
  const server = issue(dir, 'server', '/CN=localhost', ca, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  return {
    dir,
    ca: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    client: (name, subject, signer = ca) => issue(dir, name, subject, signer, 'extendedKeyUsage=clientAuth\n'),
    peer: (name, altNames = 'DNS:localhost,IP:127.0.0.1') => issue(dir, name, '/CN=localhost', ca, `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth,clientAuth\n`),
    otherCa: () => selfSigned(dir, 'other-ca', '/CN=another CA'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

