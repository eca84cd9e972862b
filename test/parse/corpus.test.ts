import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseToolCalls } from '../../src/parse';

/** An expected call: `arguments` is compared as parsed JSON, `argumentsText` exactly. */
interface ExpectedCall {
  name: string;
  arguments?: unknown;
  argumentsText?: string;
  id?: string;
}

interface CorpusEntry {
  id: string;
  text: string;
  offered?: string[];
  format: string;
  calls: ExpectedCall[];
  /** When present, the exact remaining text. */
  remaining?: string;
}

const corpus = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'corpus.json'), 'utf8')) as CorpusEntry[];
const GENERATED_ID = /^call_[A-Za-z0-9]{24}$/;

describe('fixture corpus', () => {
  it('holds at least 60 outputs covering every format', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    const formats = new Set(corpus.map((entry) => entry.format));
    expect([...formats].sort()).toEqual(['deepseek', 'deepseek_dsml', 'glm_xml', 'harmony', 'hermes', 'kimi', 'llama', 'markdown', 'mistral', 'none', 'openai']);
    expect(new Set(corpus.map((entry) => entry.id)).size).toBe(corpus.length);
  });

  it.each(corpus.map((entry) => [entry.id, entry] as const))('%s', (_id, entry) => {
    const result = parseToolCalls(entry.text, entry.offered);

    expect(result.format).toBe(entry.format);
    expect(result.calls.map((call) => call.name)).toEqual(entry.calls.map((call) => call.name));
    result.calls.forEach((call, index) => {
      const expected = entry.calls[index];
      if (expected === undefined) throw new Error('unreachable: names matched');
      if (expected.argumentsText !== undefined) expect(call.arguments).toBe(expected.argumentsText);
      if (expected.arguments !== undefined) expect(JSON.parse(call.arguments)).toEqual(expected.arguments);
      if (expected.id === undefined) expect(call.id).toMatch(GENERATED_ID);
      else expect(call.id).toBe(expected.id);
    });
    if (entry.remaining !== undefined) expect(result.remainingText).toBe(entry.remaining);
    if (entry.calls.length === 0) expect(result.remainingText).toBe(entry.text.trim());
  });
});
