import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureDist } from '../security/support/child-server';

// A schema compiled in the worker thread is loaded in the main thread from its source with V8's
// code cache (the path dispatchd takes; jest runs modules in a context of its own, where no cache
// is used, so this runs in a child Node process). Its validation is the same as the same schema's
// compiled on the event loop, and as plain Ajv's (the compile before the worker), for patterns,
// formats, defaults, uniqueItems, $ref and every error (allErrors, verbose).

const dist = (path: string) => JSON.stringify(join(__dirname, '../../dist/src', path));

const CASES = [
  [{ type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]+-\\d{2}$' }, t: { type: 'string', pattern: 'é+', maxLength: 3 } }, required: ['s'] }, [{ s: 'ab-12' }, { s: 'AB-1', t: 'éééé' }, {}, { s: 3 }]],
  [{ type: 'object', properties: { when: { type: 'string', format: 'date-time' }, mail: { format: 'email' }, id: { format: 'uuid' }, ip: { format: 'ipv4' }, host: { format: 'hostname' } } }, [{ when: '2024-01-01T00:00:00Z', mail: 'a@b.co' }, { when: 'later', mail: 'nope', id: 'x', ip: '1.2.3.999', host: '-bad-' }]],
  [{ type: 'object', properties: { n: { type: 'integer', default: 5 }, o: { type: 'object', properties: { deep: { type: 'array', default: [1, 2] } }, default: {} } } }, [{}, { n: 'x' }, { o: { deep: 'no' } }]],
  [{ type: 'object', properties: { list: { type: 'array', uniqueItems: true, items: { type: 'object' } }, nums: { type: 'array', uniqueItems: true } } }, [{ list: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }, { nums: [1, 2, 3, 2] }, { nums: [1, '1'] }]],
  [{ $defs: { node: { type: 'object', properties: { value: { type: 'number' }, next: { $ref: '#/$defs/node' } }, required: ['value'] } }, $ref: '#/$defs/node' }, [{ value: 1, next: { value: 2, next: { value: 'x' } } }, { value: 1, next: {} }]],
  [{ type: 'object', properties: { kind: { enum: ['a', 'b'] }, c: { const: { x: [1] } }, any: { anyOf: [{ type: 'string' }, { type: 'number', minimum: 10 }] } }, additionalProperties: false, minProperties: 1 }, [{ kind: 'c', c: { x: [2] }, any: 3, extra: true }, {}, { kind: 'a', c: { x: [1] }, any: 'ok' }]],
];

const SCRIPT = `
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;
const { createSchemaCompiler } = require(${dist('registry/schema-compiler')});
const { loadSchemaModule } = require(${dist('registry/schema-module')});
const cases = ${JSON.stringify(CASES)};
const compiler = createSchemaCompiler(1 << 20);
const run = (validate, data) => { const copy = structuredClone(data); const valid = validate(copy); return { valid, errors: validate.errors ?? null, data: copy }; };
(async () => {
  const out = [];
  for (const [schema, items] of cases) {
    const text = JSON.stringify(schema);
    const plain = new Ajv2020({ allErrors: true, verbose: true, useDefaults: true, ownProperties: true, strict: false, logger: false });
    addFormats(plain);
    const before = plain.compile(schema);
    const here = compiler.compile(text);
    const code = await compiler.generate(text);
    const worker = compiler.compile(text, '', {}, code);
    const { script } = loadSchemaModule(code.module, () => ({ test: () => true }), code.cachedData);
    out.push({ cached: code.cachedData !== undefined && script.cachedDataRejected === false, results: items.map((data) => ({ before: run(before, data), here: run(here.validate, data), worker: run(worker.validate, data) })) });
  }
  await compiler.close();
  console.log(JSON.stringify(out));
})();
`;

test('validation in the main thread, loaded from the code cache the worker made, is that of the event loop compile and of plain Ajv', () => {
  ensureDist();
  const out = execFileSync(process.execPath, ['-e', SCRIPT], { encoding: 'utf8', timeout: 60_000, cwd: join(__dirname, '../..') });
  const cases = JSON.parse(out) as { cached: boolean; results: { before: unknown; here: unknown; worker: unknown }[] }[];
  expect(cases).toHaveLength(CASES.length);
  for (const { cached, results } of cases) {
    expect(cached).toBe(true);
    for (const { before, here, worker } of results) {
      expect(here).toEqual(before);
      expect(worker).toEqual(before);
    }
  }
  // Some of each: valid and not.
  const valid = cases.flatMap((c) => c.results.map((r) => (r.before as { valid: boolean }).valid));
  expect(valid).toContain(true);
  expect(valid).toContain(false);
});
