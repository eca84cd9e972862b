import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { startApp, type TestDispatch } from '../helpers/servers';
import { expectRefusedAlike, expectTakenAlike, toolFile } from './tool-refusals';

// A tool file's `primary_parameter` or `resource_key` whose first token names no property the
// input schema declares, as a near miss of one or beside properties that allow no other, is
// refused at load (dispatchd exits 1) and by RegisterTools alike, naming the file, the tool, the
// key and the pointer. The probe's file: `primary_parameter: /qury` beside a schema of `query`
// alone loaded, and 11 distinct queries answering alike ended the turn ABORTED LOOP_DETECTED.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools: []\n');
});
afterAll(() => d.close());

const CLOSED = `'{"type":"object","properties":{"query":{"type":"string"},"page":{"type":"integer"}},"required":["query"],"additionalProperties":false}'`;
const tool = (pointer: string, schema = CLOSED) => `name: search, effect: read_only, ${pointer}, input_schema: ${schema}, builtin: { name: echo }`;

test.each([
  [
    'primary_parameter: /qury',
    'tools[0]: tool "search": primary_parameter "/qury" names the property "qury", which input_schema does not declare: did you mean "/query"? As written, loop detection would read nothing there and take every call of the tool for the same operation (distinct calls answering alike end the turn LOOP_DETECTED)',
  ],
  [
    'resource_key: /Query',
    'tools[0]: tool "search": resource_key "/Query" names the property "Query", which input_schema does not declare: did you mean "/query"? As written, a parallel turn would read no resource there, so calls on one resource would run at once',
  ],
  [
    'primary_parameter: /term',
    'tools[0]: tool "search": primary_parameter "/term" names the property "term", which input_schema does not declare and allows no other (additionalProperties or unevaluatedProperties false), so loop detection would read nothing there and take every call of the tool for the same operation (distinct calls answering alike end the turn LOOP_DETECTED); point it at a property it declares: "query", "page"',
  ],
])('%s is refused at load and by RegisterTools alike', async (pointer, refusal) => {
  await expectRefusedAlike(d, tool(pointer), refusal);
});

test('a declared property, a name of an open schema, and a schema of no properties load as before', async () => {
  await expectTakenAlike(d, tool('primary_parameter: /query, resource_key: /page'));
  await expectTakenAlike(d, tool('primary_parameter: /term', `'{"type":"object","properties":{"query":{}}}'`));
  await expectTakenAlike(d, tool('primary_parameter: /q', `'{"type":"object"}'`));
});

test('dispatchd exits 1 on the probe\'s file, naming the file, the tool, the key and the pointer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pointer-names-'));
  try {
    const path = join(dir, 'tools.yaml');
    writeFileSync(path, toolFile(tool('primary_parameter: /qury')));
    const run = await runDaemon(['--config', path, '--listen', '127.0.0.1:0']);
    expect(failedStart(run)).toEqual({
      exit: 1,
      level: 'error',
      code: 'invalid_config',
      message: expect.stringContaining(`dispatchd: bad config: ${path}: tools[0]: tool "search": primary_parameter "/qury" names the property "qury", which input_schema does not declare: did you mean "/query"?`),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
