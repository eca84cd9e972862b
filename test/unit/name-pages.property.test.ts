import fc from 'fast-check';
import { namePage, PAGE_SLACK_BYTES, pageAfter, pageToken, type Page } from '../../src/server/name-pages';
import { fieldSize } from '../../src/wire/sized-writer';

// namePage (ListTools, GetToolStats): following next_page_token lists every name once, in byte
// order, each page within its bytes (or one entry made to fit), and always ends.

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const NAME = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,12}$/);

test('paging lists every name once in byte order, within page_size and max bytes, and ends', () => {
  fc.assert(
    fc.property(fc.uniqueArray(NAME, { maxLength: 60 }), fc.nat(9), fc.integer({ min: PAGE_SLACK_BYTES + 1, max: PAGE_SLACK_BYTES + 400 }), fc.integer({ min: 1, max: 300 }), (names, pageSize, maxBytes, unit) => {
      const size = (name: string) => (name.length * unit) % 500;
      const seen: string[] = [];
      // The bytes `alone` gave each entry it made smaller (0 when the room it was given was 0).
      const aloneBytes = new Map<string, number>();
      let token = '';
      for (let pages = 0; pages <= names.length + 1; pages++) {
        const page: Page<string> = namePage<string>(names, {
          pageSize,
          pageToken: token,
          maxBytes,
          entry: (name) => ({ value: name, bytes: size(name) }),
          alone: (name, room) => {
            if (size(name) % 2 !== 0) return { note: `${name} left out` };
            aloneBytes.set(`${name}!`, Math.min(room, 1));
            return { value: `${name}!`, bytes: Math.min(room, 1) };
          },
        });
        expect(pageSize === 0 || page.values.length <= pageSize).toBe(true);
        const bytes = page.values.reduce((sum, value) => sum + fieldSize(aloneBytes.get(value) ?? size(value)), 0) + page.notes.reduce((sum, note) => sum + fieldSize(note.length), 0);
        if (page.values.length + page.notes.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes - PAGE_SLACK_BYTES);
        // A page's notes name entries that sort among its values.
        const covered = [...page.values.map((value) => value.replace(/!$/, '')), ...page.notes.map((note) => note.replace(/ left out$/, ''))];
        seen.push(...covered.sort(byBytes));
        if (page.nextPageToken === '') break;
        expect(page.values.length + page.notes.length).toBeGreaterThan(0);
        token = page.nextPageToken;
      }
      expect(seen).toEqual([...names].sort(byBytes));
    }),
    { numRuns: 300 },
  );
});

test('a token is the base64url of its name, and one this service could not give is refused', () => {
  expect(pageAfter(pageToken('Zeta.tool'))).toBe('Zeta.tool');
  expect(pageAfter('')).toBe('');
  for (const bad of ['%%', 'bjo', Buffer.from('tool').toString('base64url'), Buffer.from('n:').toString('base64url'), 'bjp0b29s=', 'x'.repeat(1025)]) {
    expect(() => pageAfter(bad)).toThrow('page_token is not one this service gave');
  }
});
