'use strict';
// Parse throughput over the fixture corpus, and the time for each 1 MiB adversarial input.
// Needs the compiled parser: `npx tsc -p .` writes dist/src/parse/index.js.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');

const PARSER = join(__dirname, '..', 'dist', 'src', 'parse', 'index.js');
const FIXTURES = join(__dirname, '..', 'test', 'parse', 'fixtures');

/** `prefix`, then `unit` repeated, then `suffix`: exactly `size` characters. */
function build(input, size) {
  const prefix = input.prefix ?? '';
  const suffix = input.suffix ?? '';
  return (prefix + input.unit.repeat(Math.ceil(size / input.unit.length))).slice(0, size - suffix.length) + suffix;
}

/**
 * Measures the parser and returns the figures: corpus throughput in MB/s (10^6 bytes of UTF-8),
 * parsing every corpus entry repeatedly until `minMs` have passed, and the milliseconds one
 * parse of each adversarial input takes after a warm-up; `pass` says whether every one stayed
 * under the limit (for bench/run.js, which prints the figures with `print`).
 * @param {{ minMs?: number }} [options] minMs defaults to 1000.
 */
function run(options = {}) {
  const { parseToolCalls } = require(PARSER);
  const corpus = JSON.parse(readFileSync(join(FIXTURES, 'corpus.json'), 'utf8'));
  const adversarial = JSON.parse(readFileSync(join(FIXTURES, 'adversarial.json'), 'utf8'));
  const minMs = options.minMs ?? 1000;

  const bytes = corpus.reduce((sum, entry) => sum + Buffer.byteLength(entry.text, 'utf8'), 0);
  const parseCorpus = () => {
    for (const entry of corpus) parseToolCalls(entry.text, entry.offered);
  };
  for (let i = 0; i < 20; i++) parseCorpus();
  let passes = 0;
  let elapsed = 0;
  const start = performance.now();
  while (elapsed < minMs) {
    parseCorpus();
    passes++;
    elapsed = performance.now() - start;
  }

  const ms = {};
  for (const input of adversarial.inputs) {
    // Warm-up: a few parses of a sixteenth of the input, then one at full size.
    const small = build(input, adversarial.size / 16);
    for (let i = 0; i < 8; i++) parseToolCalls(small);
    const text = build(input, adversarial.size);
    parseToolCalls(text);
    const begin = performance.now();
    parseToolCalls(text);
    ms[input.name] = Number((performance.now() - begin).toFixed(2));
  }
  const times = Object.values(ms);
  const maxMs = Math.max(...times);
  return {
    pass: maxMs < adversarial.limitMs,
    corpus: {
      entries: corpus.length,
      bytes,
      passes,
      seconds: Number((elapsed / 1000).toFixed(3)),
      mbPerSecond: Number(((bytes * passes) / 1e6 / (elapsed / 1000)).toFixed(2)),
      parsesPerSecond: Math.round((corpus.length * passes) / (elapsed / 1000)),
    },
    adversarial: {
      inputChars: adversarial.size,
      limitMs: adversarial.limitMs,
      maxMs,
      ms,
    },
  };
}

/** Prints the figures `run` returned. */
function print(figures) {
  const { corpus, adversarial } = figures;
  console.log(`corpus: ${corpus.entries} outputs, ${corpus.bytes} bytes, ${corpus.passes} passes in ${corpus.seconds} s`);
  console.log(`  ${corpus.mbPerSecond} MB/s, ${corpus.parsesPerSecond} parses/s`);
  console.log(`adversarial inputs of ${adversarial.inputChars} characters (limit ${adversarial.limitMs} ms):`);
  for (const [name, ms] of Object.entries(adversarial.ms)) console.log(`  ${ms.toFixed(2).padStart(8)} ms  ${name}`);
  console.log(`  slowest: ${adversarial.maxMs.toFixed(2)} ms`);
}

module.exports = { run, print };

if (require.main === module) print(run());
