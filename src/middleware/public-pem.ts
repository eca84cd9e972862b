/**
 * The labels of PEM and OpenPGP blocks that hold nothing secret: certificates, their requests and
 * revocation lists, public keys, signatures. Their base64 is random-looking, and the entropy step
 * redacted their bodies line by line: an agent reading a certificate (`openssl s_client -showcerts`,
 * a CA bundle, a `cert.pem`) got it corrupted, and one that wrote it back wrote the markers.
 */
const PUBLIC_LABELS = new Set(['CERTIFICATE', 'TRUSTED CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST', 'X509 CRL', 'PUBLIC KEY', 'RSA PUBLIC KEY', 'PGP PUBLIC KEY BLOCK', 'PGP SIGNATURE', 'PGP MESSAGE']);
const BEGIN = '-----BEGIN ';
const DASHES = '-----';
const MAX_LABEL = 32;

/**
 * `text` with `redact` applied to all but the bodies of its public PEM blocks, which stay as they
 * are (BEGIN and END lines included). A block needs its END line of the same label. Linear: each
 * search moves forward. A text with no `-----BEGIN ` costs one native search.
 */
export function outsidePublicPem(text: string, redact: (part: string) => string): string {
  let begin = text.indexOf(BEGIN);
  if (begin < 0) return redact(text);
  let out = '';
  let from = 0;
  while (begin >= 0) {
    const labelEnd = text.indexOf(DASHES, begin + BEGIN.length);
    const label = labelEnd < 0 ? '' : text.slice(begin + BEGIN.length, labelEnd);
    const end = labelEnd >= 0 && label.length <= MAX_LABEL && PUBLIC_LABELS.has(label) ? text.indexOf(`-----END ${label}-----`, labelEnd) : -1;
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
