// An approval shows the call's arguments redacted, and they run to max_argument_bytes (1 MiB):
// redacted whole, hostile ones took ~1 s of the event loop. Past INLINE_REDACTION_CHARS only the
// head is redacted, shown without the end where the cut may have split a secret.
import { approvalText, APPROVAL_TEXT_CHARS } from '../../src/pipeline';
import { slowerThan } from '../helpers/cpu-time';

test('a MiB of hostile arguments is shown redacted within a bounded time', () => {
  const text = 'pwd="a" '.repeat(131_072);
  approvalText(text.slice(0, 1024));
  let shown = '';
  // Old: ~1,100 ms of CPU; now ~40 ms (32 Ki characters at most). Past 400 ms, held to 8x the
  // text's first 64 Ki characters (the same work now; a sixteenth of it before).
  expect(slowerThan(() => (shown = approvalText(text)), () => approvalText(text.slice(0, 1 << 16)), 8, 400)).toBeUndefined();
  expect(shown).not.toContain('"a"');
  expect(shown.startsWith(`pwd="[REDACTED:secret]" `)).toBe(true);
  expect(shown.length).toBeLessThanOrEqual(APPROVAL_TEXT_CHARS + 3);
});

test('a short text is redacted whole and cut after, as before', () => {
  expect(approvalText('{"password":"hunter2"}')).toBe('{"password":"[REDACTED:secret]"}');
});
