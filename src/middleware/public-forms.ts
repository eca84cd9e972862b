/**
 * Random-looking values that are public by their form, which the entropy step keeps: redacting them
 * corrupted what agents read every day (found by a corpus of 79 non-secret tool outputs, 34 changed).
 * - Go's module hashes after `h1:` (go.sum, 48 lines of 50 redacted; Terraform's
 *   `.terraform.lock.hcl`), so `go mod verify` failed on what the agent wrote back;
 * - SSH public keys (`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5...`, ecdsa, rsa, security keys): the blob
 *   starts with its type's name, base64-encoded (a private key is a PEM block, redacted as one);
 * - a certificate or public key in base64 (Kubernetes' `caBundle`, a kubeconfig's
 *   `certificate-authority-data`): `-----BEGIN CERTIFICATE-----` encoded, with no private key
 *   decoded after it (a bundle of a certificate and its key is redacted);
 * - Stripe's publishable keys (`pk_live_`, `pk_test_`), Mapbox's public tokens (`pk.eyJ`) and
 *   PostHog's project keys (`phc_`): meant for browsers (Stripe's and Mapbox's secret keys,
 *   `sk_live_`, `sk.eyJ`, are redacted); a page's CSP nonce (`'nonce-...'`);
 * - a value named a public key (`public key: ...`, WireGuard's), a weak ETag (`ETag: W/"..."`:
 *   the `W/` hid its name from the key-name check);
 * - the payload of an image or a font in a `data:` URL (`data:image/png;base64,...`).
 */

/** SSH public key blobs: `AAAA` and the type's name (`ssh-rsa`, `ssh-ed25519`, `ecdsa-sha2-`, `sk-ssh-ed25519@`, `sk-ecdsa-sha2-`, `ssh-dss`), base64. */
const SSH_PUBLIC_BLOB = /^AAAA(?:B3NzaC1yc2E|C3NzaC1lZDI1NTE5|E2VjZHNhLXNoYTIt|GnNrLXNzaC1lZDI1NTE5|InNrLWVjZHNhLXNoYTIt|B3NzaC1kc3)/;

/** `-----BEGIN CERTIFICATE-----` and `-----BEGIN PUBLIC KEY-----`, base64-encoded from a 3-byte boundary. */
const ENCODED_PUBLIC_PEM = /^LS0tLS1CRUdJTiB(?:DRVJUSUZJQ0FURS0tLS0t|QVUJMSUMgS0VZLS0tLS0)/;

/** Publishable keys (Stripe's, Mapbox's, PostHog's project keys) and a CSP's nonce (`'nonce-...'`), sent to every browser. */
const PUBLISHABLE = /^(?:pk_(?:live|test)_|phc_|nonce-)/;

/** What comes before a value named a public key with a space (WireGuard's `public key: ...`), or a weak ETag (`ETag: W/"..."`). */
const PUBLIC_KEY_BEFORE = /(?:public[ _-]?key|\betag["']?[ \t]{0,4}:[ \t]{0,4}W\/)["']?[ \t]{0,4}[:=]?[ \t]{0,4}["']?$/i;

/** What comes before an image's or a font's base64 payload in a `data:` URL. */
const DATA_URL_BEFORE = /data:(?:image|font)\/[\w.+-]{1,40};base64,$/;

/** Whether the random-looking run at `text[start, end)` is a public value by its form. */
export function isPublicForm(text: string, start: number, end: number): boolean {
  const head = text.slice(start, start + 40);
  if (SSH_PUBLIC_BLOB.test(head) || PUBLISHABLE.test(head)) return true;
  // After `h1:`, and Mapbox's public `pk.` (whose `.` ends the run before it).
  if (start >= 3 && (text.startsWith('h1:', start - 3) || (text.startsWith('pk.', start - 3) && head.startsWith('eyJ')))) return true;
  if (PUBLIC_KEY_BEFORE.test(text.slice(Math.max(0, start - 32), start))) return true;
  if (start >= 13 && text.charCodeAt(start - 1) === 44 && DATA_URL_BEFORE.test(text.slice(Math.max(0, start - 64), start))) return true;
  return ENCODED_PUBLIC_PEM.test(head) && !Buffer.from(text.slice(start, end), 'base64').toString('latin1').includes('PRIVATE KEY');
}
