import { generateKeyPairSync } from 'node:crypto';
import { redactSecrets } from '../../src/middleware';

// Found by a corpus of 79 non-secret tool outputs agents read every day, 34 of them changed by the
// redaction: random-looking values public by their form, which the entropy step took for secrets.
// An agent that wrote back a go.sum, an authorized_keys file or a kubeconfig wrote the markers.

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const sshBlob = publicKey.export({ type: 'spki', format: 'der' }).subarray(12); // the raw 32-byte key
const sshKey = (() => {
  const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  return Buffer.concat([field(Buffer.from('ssh-ed25519')), field(sshBlob)]).toString('base64');
})();
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const certificatePem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7919) % 251)).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
const certificateData = Buffer.from(certificatePem).toString('base64');
const bundleData = Buffer.from(certificatePem + privatePem).toString('base64');

test.each<[string, string]>([
  ['go.sum', 'github.com/stretchr/testify v1.9.0 h1:HtqpIVDClZ4nwg75+xL1S1D+EG2pbr1zsmG/hN7l/TU=\ngithub.com/stretchr/testify v1.9.0/go.mod h1:r2ic/lqez/lEtzL7wO/rwa5dbSLXVDPFyf8C91i36aY='],
  ['.terraform.lock.hcl', '  hashes = [\n    "h1:1mbQB1HoZEmtRk8/nsa37VRyMOsRj6hQlU9mhLRCz1k=",\n    "h1:cuPlUiLh1ifk6zMNSHa7x3G8LTND1v+XJd/Vq1zaQb4=",\n  ]'],
  ['an SSH public key', `ssh-ed25519 ${sshKey} alice@build-01`],
  ['ssh-keyscan', 'github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT'],
  ["a webhook's caBundle", `  clientConfig:\n    caBundle: ${certificateData}\n`],
  ["a kubeconfig's certificate-authority-data", `- cluster:\n    certificate-authority-data: ${certificateData}\n    server: https://10.0.0.1:6443`],
  ["Stripe's publishable key", "const stripe = Stripe('pk_live_51H8x2ZKl0bYq7TnQm3VfR9sLwXe4Dg6Cj1Hp8Nz5Ua2Ty0Ob7Mk3Wi9Rc6Qx4Vs1Je8Lg5Df2Ah7Kt');"],
  ["Mapbox's public token", 'window.MAPBOX_PUBLIC = "pk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjbHgyqdfp19MPqGC7FzSf3PplIn0.x9Rk2Lq7Wm4Tz8Vb1Nc6Yd";'],
  ["PostHog's project key", "posthog.init('phc_Xk9mR2qL7wT4zV8bN1cY6dF3gH5jK0pQ2sU4vW7xZ9A')"],
  ['an image in a data URL', '.icon-star{background-image:url(data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHBhdGggZD0iTTggMGwyIDZoNmwtNSA0IDIgNi01LTQtNSA0IDItNi01LTRoNnoiIGZpbGw9IiNmYzAiLz48L3N2Zz4=)}'],
  ["a signed commit's SSH signature", 'gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgTMiOOmbE5DubXpDjgDF/k7CVb2\n AAAAQFYXywxVgJ9pvehgjZfQoUHdC/WaKS8ZyRWw6cBzEUi7nDFTHTWtLNHzHgklw0Ujqs\n OYeO9ovuJdI7cwHCESqgE=\n -----END SSH SIGNATURE-----'],
  ["Helm's checksum annotation", '      annotations:\n        checksum/secret: b36df11245dc116d933f3902987722abb8e4231ba055d1219d142df7a663220f'],
  ["WireGuard's public key", 'interface: wg0\n  public key: KqLyzZMjdTKNSUfUz09S2fu48fN7ZYnSRIqiNDxleco=\n  private key: (hidden)'],
  ["a page's CSP nonce", "content-security-policy: script-src 'self' 'nonce-Q2xhdWRlRm9yV2ViM3Qz7kL9pX2vB8nM4' https:"],
  ['a weak ETag', 'etag: W/"ad1be-1cTPZkq3XvL9mB2wR8nQ7yF4hJ6gD0sA"'],
])('kept: %s', (_name, text) => {
  expect(redactSecrets(text)).toBe(text);
});

test.each<[string, string, string]>([
  ['a certificate with its private key, in base64', `    tls.crt: ${bundleData}`, '    tls.crt: [REDACTED:high_entropy]'],
  ["Stripe's secret key", 'STRIPE=sk_live_51H8x2ZKl0bYq7TnQm3VfR9sLwXe4Dg6Cj1Hp8Nz5Ua2Ty', 'STRIPE=[REDACTED:api_key]'],
  ["a token after another algorithm's prefix", 'h2:Qy3wZZlJ9VUYMw3N3hHj5U27CTkJ5h1DxsVm3jcNUa', 'h2:[REDACTED:high_entropy]'],
  ["a Helm value named secret, not a checksum's", '        secret: b36df11245dc116d933f3902987722ab', '        secret: [REDACTED:secret]'],
])('redacted: %s', (_name, text, expected) => {
  expect(redactSecrets(text)).toBe(expected);
});

test('a private key in base64 is still redacted under a name no check reads', () => {
  const data = Buffer.from(privatePem).toString('base64');
  expect(redactSecrets(`    client-key-data: ${data}`)).toBe('    client-key-data: [REDACTED:high_entropy]');
});
