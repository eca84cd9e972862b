import fc from 'fast-check';
import { MAX_PARSE_DEPTH, parseTolerantValue, toCompactJson } from '../../src/parse';

/** The compact JSON of the value parsed from all of `text`, or the failure reason. */
function compact(text: string): string {
  const parsed = parseTolerantValue(text, 0, text.length);
  return parsed.ok ? toCompactJson(parsed.value) : `fail:${parsed.reason}`;
}

describe('parseTolerantValue', () => {
  it('reads strict JSON exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => {
        expect(JSON.parse(compact(text))).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['trailing commas', '{"a": [1, 2,], "b": 3,}', '{"a":[1,2],"b":3}'],
    ['single-quoted strings', "{'a': 'it\\'s \"x\"'}", '{"a":"it\'s \\"x\\""}'],
    ['unquoted keys', '{city: "Paris", max_days: 3, $ref: null, x-y: 1}', '{"city":"Paris","max_days":3,"$ref":null,"x-y":1}'],
    ['Python literals', '[True, False, None]', '[true,false,null]'],
    ['a missing closing brace', '{"a": {"b": 1}', '{"a":{"b":1}}'],
    ['missing closers of every kind', '{"a": [1, {"b": ["x"', '{"a":[1,{"b":["x"]}]}'],
    ['raw newlines and tabs in strings', '{"code": "line 1\nline\t2"}', '{"code":"line 1\\nline\\t2"}'],
    // Kept with their backslash, as Python keeps them (test/parse/unknown-escapes.test.ts); \/ is JSON's.
    ['unknown escapes, with their backslash', '{"a": "\\$\\/\\q"}', '{"a":"\\\\$/\\\\q"}'],
    ['JavaScript and Python escapes', '{"a": "\\x41\\x7a|\\101\\0|\\v|\\xZ"}', '{"a":"Az|A\\u0000|\\u000b|\\\\xZ"}'],
    ['JavaScript and Python escapes in single quotes', "['\\x41\\'\\x2']", '["A\'\\\\x2"]'],
    ['a malformed unicode escape, with its backslash', '{"a": "\\u12G4"}', '{"a":"\\\\u12G4"}'],
    ['surrogate pair escapes', '{"a": "\\ud83d\\ude00"}', '{"a":"😀"}'],
    ['lenient numbers', '[+1, .5, 1., 007, -0.0e0, -.5e3, 1.e5, 000]', '[1,0.5,1,7,-0.0e0,-0.5e3,1e5,0]'],
    ['lenient numbers beyond a double, digit for digit', '[+9007199254740993, 0012345678901234567891, +00.10000000000000000001]', '[9007199254740993,12345678901234567891,0.10000000000000000001]'],
    ['integers beyond 2^53, kept as written', '{"id": 123456789012345678901234567890}', '{"id":123456789012345678901234567890}'],
    ['a __proto__ key, kept as a key', '{"__proto__": {"x": 1}}', '{"__proto__":{"x":1}}'],
    ['duplicate keys, the last winning', '{"a": 1, "a": 2}', '{"a":2}'],
    ['a byte-order mark and no-break spaces', '\ufeff{\u00a0"a": 1}', '{"a":1}'],
  ])('accepts %s', (_label, text, expected) => {
    expect(compact(text)).toBe(expected);
  });

  it.each([
    ['the text ending inside a string', '{"query": "best trails near Gren', 'truncated'],
    ['the text ending inside a key', '{"name": "x", "para', 'truncated'],
    ['the text ending where a value is due', '{"name": "x", "parameters":', 'truncated'],
    ['the text ending after a comma', '{"a": 1,', 'truncated'],
    ['the text ending after a comma in an array', '{"to": ["a@x.com",', 'truncated'],
    ['the text ending after a comma and spaces', '{"to": ["a@x.com"], \n ', 'truncated'],
    ['the text ending after an opening brace', '{"name": "x", "arguments": {', 'truncated'],
    ['the text ending after an opening bracket', '{"to": [', 'truncated'],
    ['the text ending after a key', '{"name": "x", "arguments"', 'truncated'],
    ['the text ending inside a literal', '[tru', 'truncated'],
    ['the text ending inside a number', '{"amount": 10', 'truncated'],
    ['the text ending after a decimal point', '[1.', 'truncated'],
    ['the text ending inside an exponent', '{"a": 1e', 'truncated'],
    ['an unknown bare word', '{"a": yes}', 'syntax'],
    ['a missing colon', '{"a" 1}', 'syntax'],
    ['a missing comma', '{"a": 1 "b": 2}', 'syntax'],
    ['a double comma', '[1,,2]', 'syntax'],
    ['prose in braces', '{x | x > 0}', 'syntax'],
    ['not-a-number words', '[NaN, Infinity]', 'syntax'],
    ['signs and points with no digit', '[+, .]', 'syntax'],
  ])('rejects %s', (_label, text, reason) => {
    expect(compact(text)).toBe(`fail:${reason}`);
  });

  it(`fails nesting deeper than ${MAX_PARSE_DEPTH} without recursing further`, () => {
    expect(compact('['.repeat(MAX_PARSE_DEPTH) + ']'.repeat(MAX_PARSE_DEPTH))).not.toMatch(/^fail/);
    expect(compact('['.repeat(MAX_PARSE_DEPTH + 1))).toBe('fail:depth');
    expect(compact('{"a":'.repeat(100_000))).toBe('fail:depth');
  });

  it('names the containers left open by a failure, each failing alone just where the value did', () => {
    const broken = fc
      .tuple(fc.json({ maxDepth: 6 }), fc.nat(), fc.constantFrom('', ' oops', ':', '"', '}}'))
      .map(([text, cut, tail]) => text.slice(0, cut % (text.length + 1)) + tail);
    fc.assert(
      fc.property(broken, (text) => {
        const parsed = parseTolerantValue(text, 0, text.length);
        if (parsed.ok) return;
        for (const open of parsed.unclosed) {
          expect(open).toBeGreaterThan(0);
          expect(parseTolerantValue(text, open, text.length)).toMatchObject({ ok: false, reason: parsed.reason, at: parsed.at });
        }
      }),
      { numRuns: 2000 },
    );
    const text = '{"a": [{"b": 1}, {"name": "f", "arguments": {"c": "x';
    // Innermost first; not the object with a call's keys (a broken call, which a scan skips whole).
    const unclosed = [text.indexOf('{"c"'), text.indexOf('[')];
    expect(parseTolerantValue(text, 0, text.length)).toMatchObject({ ok: false, unclosed });
    expect(parseTolerantValue('{"a":'.repeat(200), 0, 1000)).toMatchObject({ ok: false, reason: 'depth', unclosed: [] });
  });

  it('reports where a value ends and reads nothing past its limit', () => {
    const text = 'say {"a": 1} then {"b": 2}';
    expect(parseTolerantValue(text, 4, text.length)).toMatchObject({ ok: true, start: 4, end: 12 });
    const cut = parseTolerantValue(text, 4, 9);
    expect(cut.ok).toBe(false);
    expect(cut.ok ? -1 : cut.at).toBeLessThanOrEqual(9);
  });

  it('names the objects and arrays the limit closed, innermost first', () => {
    const closed = (text: string): string[] | string => {
      const parsed = parseTolerantValue(text, 0, text.length);
      return parsed.ok ? parsed.containersClosedAtLimit.map(toCompactJson) : parsed.reason;
    };
    expect(closed('{"a": [1, {"b": "x"}]}')).toEqual([]);
    expect(closed('{"a": [1, {"b": "x"}]')).toEqual(['{"a":[1,{"b":"x"}]}']);
    expect(closed('{"a": [1, {"b": "x"}')).toEqual(['[1,{"b":"x"}]', '{"a":[1,{"b":"x"}]}']);
    expect(closed('{"a": [1, {"b": "x"')).toEqual(['{"b":"x"}', '[1,{"b":"x"}]', '{"a":[1,{"b":"x"}]}']);
    expect(closed('["staging", "prod"')).toEqual(['["staging","prod"]']);
    expect(closed('["staging", "prod"]')).toEqual([]);
    expect(closed('{"a": 1, "b": {"c": "x"}, "a": {"d": "y"')).toEqual(['{"d":"y"}', '{"a":{"d":"y"},"b":{"c":"x"}}']);
    expect(closed('{"a": [1, {"b": "x",')).toBe('truncated');
  });

  it('takes a number ending at a limit before the end of the text as complete', () => {
    const text = '{"a": 10</tool_call>';
    const parsed = parseTolerantValue(text, 0, text.indexOf('<'));
    expect(parsed.ok ? toCompactJson(parsed.value) : parsed.reason).toBe('{"a":10}');
  });

  it('ends a container at a limit before the end of the text after a stray comma, and says which limit closed it', () => {
    const atTag = (text: string): string => {
      const parsed = parseTolerantValue(text, 0, text.indexOf('<'));
      return parsed.ok ? `${toCompactJson(parsed.value)} ${parsed.limitEndsText}` : parsed.reason;
    };
    expect(atTag('{"a": 1, "b": ["x"], </tool_call>')).toBe('{"a":1,"b":["x"]} false');
    // In a list a value was due after the comma.
    expect(atTag('{"a": 1, "b": ["x", </tool_call>')).toBe('truncated');
    expect(atTag('{"a": {"b": 1},\n</tool_call>')).toBe('{"a":{"b":1}} false');
    expect(atTag('{"a": 1</tool_call>')).toBe('{"a":1} false');
    // Where a value or key was due, an earlier limit cuts off as the end of the text does.
    expect(atTag('{"a": </tool_call>')).toBe('truncated');
    expect(atTag('{ </tool_call>')).toBe('truncated');
    expect(atTag('[ </tool_call>')).toBe('truncated');
    const atEnd = parseTolerantValue('{"a": "x"', 0, 9);
    expect(atEnd.ok && atEnd.limitEndsText).toBe(true);
    expect(parseTolerantValue('{"a": "x",', 0, 10).ok).toBe(false);
  });

  it('tells whether a string ran across the soft limit', () => {
    const text = '{"a": 1, "b": "a long string';
    const across = (softLimit: number): boolean => {
      const parsed = parseTolerantValue(text, 0, text.length, { softLimit });
      return !parsed.ok && parsed.stringAcrossSoftLimit;
    };
    expect(across(20)).toBe(true);
    expect(across(text.indexOf('"a long'))).toBe(false);
    expect(across(6)).toBe(false);
    expect(across(2)).toBe(true);
  });

  it('charges a long failure its length plus 4,096, not twice its length', () => {
    const text = `{"a": "${'x'.repeat(100_000)}`;
    const budget = { remaining: 1_000_000 };
    expect(parseTolerantValue(text, 0, text.length, { budget })).toMatchObject({ ok: false, reason: 'truncated' });
    expect(budget.remaining).toBe(1_000_000 - (text.length + 1) - 4096);
  });

  it('charges what it reads (twice for a short failure) and stops at once when the budget is spent', () => {
    const budget = { remaining: 100 };
    const text = '{"a": [1, 2, 3]}';
    expect(parseTolerantValue(text, 0, text.length, { budget }).ok).toBe(true);
    expect(budget.remaining).toBe(100 - text.length - 1);
    const failing = { remaining: 100 };
    expect(parseTolerantValue(text.slice(0, 5), 0, 5, { budget: failing }).ok).toBe(false);
    expect(failing.remaining).toBe(100 - 2 * 6);
    budget.remaining = 0;
    expect(parseTolerantValue(text, 0, text.length, { budget })).toMatchObject({ ok: false, reason: 'budget', at: 0 });
  });
});
