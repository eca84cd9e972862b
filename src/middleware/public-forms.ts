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

// Each is tried at the run's start (sticky, `lastIndex`): no slice of the text per run.

/**
 * SSH public key blobs (`AAAA` and the type's name, base64: `ssh-rsa`, `ssh-ed25519`, `ecdsa-sha2-`,
 * `sk-ssh-ed25519@`, `sk-ecdsa-sha2-`, `ssh-dss`), publishable keys (Stripe's, PostHog's) and a
 * CSP's nonce (`'nonce-...'`), sent to every browser.
 */
const PUBLIC_START = /AAAA(?:B3NzaC1yc2E|C3NzaC1lZDI1NTE5|E2VjZHNhLXNoYTIt|GnNrLXNzaC1lZDI1NTE5|InNrLWVjZHNhLXNoYTIt|B3NzaC1kc3)|pk_(?:live|test)_|phc_|nonce-/y;

/**
 * What comes before a public value: a name of a public key with a space (WireGuard's `public key:
 * ...`), a weak ETag (`ETag: W/"..."`), an image's or a font's `data:` URL (`;base64,`).
 */
const PUBLIC_BEFORE = /(?<=(?:public[ _-]?key|\betag["']?[ \t]{0,4}:[ \t]{0,4}W\/)["']?[ \t]{0,4}[:=]?[ \t]{0,4}["']?|data:(?:image|font)\/[\w.+-]{1,40};base64,)/iy;

/** `-----BEGIN CERTIFICATE-----` and `-----BEGIN PUBLIC KEY-----`, base64-encoded from a 3-byte boundary. */
const ENCODED_PUBLIC_PEM = /LS0tLS1CRUdJTiB(?:DRVJUSUZJQ0FURS0tLS0t|QVUJMSUMgS0VZLS0tLS0)/y;

/** Whether the sticky `regex` matches `text` at `at`. */
function matchesAt(regex: RegExp, text: string, at: number): boolean {
  regex.lastIndex = at;
  return regex.test(text);
}

/** Whether the random-looking run at `text[start, end)` is a public value by its form. */
export function isPublicForm(text: string, start: number, end: number): boolean {
  const before = text.charCodeAt(start - 1);
  // After `h1:`, and Mapbox's public `pk.` (whose `.` ends the run before it).
  if (before === 58 && text.startsWith('h1:', start - 3)) return true;
  if (before === 46 && text.startsWith('pk.eyJ', start - 3)) return true;
  if (matchesAt(PUBLIC_START, text, start) || matchesAt(PUBLIC_BEFORE, text, start)) return true;
  return matchesAt(ENCODED_PUBLIC_PEM, text, start) && !Buffer.from(text.slice(start, end), 'base64').toString('latin1').includes('PRIVATE KEY');
}
