import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';

const PEM_BEGIN = /-----BEGIN CERTIFICATE-----/g;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The certificates of a PEM bundle, or the reason it is unusable. Every PEM block must be a whole
 * certificate that parses: a file cut off mid-write is refused, not read up to the cut. Blocks of
 * other kinds are left to TLS.
 */
function certificatesIn(pem: Buffer, file: string): X509Certificate[] | string {
  const text = pem.toString('latin1');
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if ((text.match(PEM_BEGIN) ?? []).length !== blocks.length) return `a certificate in ${file} is cut off`;
  if (blocks.length === 0) return `no PEM certificate in ${file}`;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return `a certificate in ${file} does not parse`;
  }
}

/**
 * Why a certificate chain and private key cannot serve TLS (a file that does not parse, a key of
 * another certificate), or undefined when they can. Messages name the files.
 */
export function identityProblem(cert: Buffer, key: Buffer, files: { readonly cert: string; readonly key: string }): string | undefined {
  const chain = certificatesIn(cert, files.cert);
  if (typeof chain === 'string') return chain;
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    return `no usable private key in ${files.key}`;
  }
  if (!chain[0]!.checkPrivateKey(privateKey)) return `the private key in ${files.key} does not match the certificate in ${files.cert}`;
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    return `${files.cert} and ${files.key} are refused by TLS (${(error as Error).message})`;
  }
  return undefined;
}

/**
 * Why a CA bundle cannot verify client certificates, or undefined when it can. Node's TLS accepts
 * a bundle of garbage silently and then refuses every client, so the bundle is parsed here.
 */
export function caProblem(ca: Buffer, file: string): string | undefined {
  const certificates = certificatesIn(ca, file);
  return typeof certificates === 'string' ? certificates : undefined;
}
