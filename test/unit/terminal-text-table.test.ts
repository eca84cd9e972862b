// terminal-text scans text by a table of the BMP built from its Unicode-property regex (and rows of
// characters past the BMP, built as they are first seen) instead of running the regex over the
// text. The table must give what the regex gives: here, for every code point, alone and among
// other characters, and for strings mixing every kind of character the regex treats specially.
import { firstUnsafeChar, terminalText, terminalWord } from '../../src/events/terminal-text';

/** The regex the table is built from, as terminal-text states it (its set, by Unicode property). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|(?!\p{Variation_Selector})\p{Default_Ignorable_Code_Point}/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');
const escaped = (char: string) => {
  const code = char.codePointAt(0)!;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};
/** What terminalText gave when it ran the regex over the text (the code before the table). */
const byRegex = (text: string, multiline = false) => text.replace(UNSAFE_ALL, (char) => (multiline && (char === '\n' || char === '\t') ? char : escaped(char)));

test('every code point is escaped exactly when the Unicode-property regex matches it, alone and between other characters', () => {
  const wrong: string[] = [];
  for (let code = 0; code <= 0x10ffff; code++) {
    const char = String.fromCodePoint(code);
    const unsafe = UNSAFE.test(char);
    const found = firstUnsafeChar(`é${char}😀`);
    if ((found !== undefined) !== unsafe || (unsafe && (found!.code !== code || found!.position !== 2))) wrong.push(code.toString(16));
    if (terminalText(`日${char}x`) !== byRegex(`日${char}x`)) wrong.push(`text ${code.toString(16)}`);
  }
  expect(wrong).toEqual([]);
});

test('mixed strings (joiners, tags, pairs and lone surrogates, line breaks) read as the regex reads them', () => {
  const alphabet = ['a', ' ', '\n', '\t', '\r', 'é', '😀', '\u200d', '\u00ad', '\u202e', '\u{e0041}', '\ud800', '\udc00', '\ufe0f', '\u{1d173}', '"', '\x7f', '\u0085', '東'];
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
  // Mismatches are gathered and compared once: 60,000 expect calls took ~7 s of the suite.
  const wrong: unknown[] = [];
  for (let k = 0; k < 20_000; k++) {
    let text = '';
    for (let j = next(10); j > 0; j--) text += alphabet[next(alphabet.length)];
    const plain = text !== '' && !/\s/.test(text) && !UNSAFE.test(text);
    const match = UNSAFE.exec(text);
    const found = firstUnsafeChar(text);
    const expected = match === null ? undefined : { code: match[0].codePointAt(0), position: [...text.slice(0, match.index)].length + 1 };
    if (terminalText(text) !== byRegex(text)) wrong.push({ text, kind: 'text' });
    if (terminalText(text, true) !== byRegex(text, true)) wrong.push({ text, kind: 'multiline' });
    if (terminalWord(text) !== (plain ? text : byRegex(JSON.stringify(text)))) wrong.push({ text, kind: 'word' });
    if (found?.code !== expected?.code || found?.position !== expected?.position) wrong.push({ text, kind: 'first unsafe', found, expected });
  }
  expect(wrong).toEqual([]);
});
