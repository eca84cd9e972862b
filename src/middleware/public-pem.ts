/**
 * The labels of PEM and OpenPGP blocks that hold nothing secret: certificates, their requests and
 * revocation lists, public keys, signatures (OpenPGP's, and SSH's of a signed commit). Their base64 is random-looking, and the entropy step
 * redacted their bodies line by line: an agent reading a certificate (`openssl s_client -showcerts`,
 * a CA bundle, a `cert.pem`) got it corrupted, and one that wrote it back wrote the markers.
 */
const PUBLIC_LABELS = new Set(['CERTIFICATE', 'TRUSTED CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST', 'X509 CRL', 'PUBLIC KEY', 'RSA PUBLIC KEY', 'PGP PUBLIC KEY BLOCK', 'PGP SIGNATURE', 'PGP MESSAGE', 'SSH SIGNATURE']);
const BEGIN = '-----BEGIN ';
const DASHES = '-----';
const MAX_LABEL = 32;

/**
 * `text` with `redact` applied to all but the bodies of its public PEM blocks, which stay as they
 * are (BEGIN and END lines included). A block needs its END line of the same label. Linear: each
 * search moves forward, and a label whose END was not found after one BEGIN is not looked for
 * after a later one (there is none: a MiB of BEGIN lines with no END took 8 s, each BEGIN
 * searching the rest of the text). A text with no `-----BEGIN ` costs one native search.
 */
export function outsidePublicPem(text: string, redact: (part: string) => string): string {
  let begin = text.indexOf(BEGIN);
  if (begin < 0) return redact(text);
  let out = '';
  let from = 0;
  const endless = new Set<string>();
  while (begin >= 0) {
    const labelEnd = text.indexOf(DASHES, begin + BEGIN.length);
    const label = labelEnd < 0 ? '' : text.slice(begin + BEGIN.length, labelEnd);
    const sought = labelEnd >= 0 && label.length <= MAX_LABEL && PUBLIC_LABELS.has(label) && !endless.has(label);
    const end = sought ? text.indexOf(`-----END ${label}-----`, labelEnd) : -1;
    if (sought && end < 0) endless.add(label);
    if (end < 0) {
      begin = labelEnd < 0 ? -1 : text.indexOf(BEGIN, labelEnd);
      continue;
    }
    const stop = end + `-----END ${label}-----`.length;
    out += redact(text.slice(from, begin)) + text.slice(begin, stop);
    from = stop;
    begin = text.indexOf(BEGIN, stop);
  }
  return out + redact(text.slice(from));
}
