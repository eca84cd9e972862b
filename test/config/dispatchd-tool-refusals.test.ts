import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../helpers/daemon';
import { failedStart } from '../helpers/startup-line';
import { toolFile } from './tool-refusals';

// dispatchd (the compiled bin, as `npm test` builds it) refuses a config file whose tool breaks
// one of the rules added for tool files: exit 1, naming the file, the tool and the problem.

const dir = mkdtempSync(join(tmpdir(), 'dispatchd-tool-rules-'));

test.each([
  ['attempts.yaml', 'name: a, effect: read_only, retry: { max_attempts: 10 }, builtin: { name: echo }', 'tools[0]: tool "a": retry.max_attempts is 10, over the limit of 5'],
  ['zero.yaml', 'name: a, effect: read_only, retry: { max_attempts: 0 }, builtin: { name: echo }', 'tools[0].retry.max_attempts: must be at least 1'],
  ['root.yaml', `name: a, effect: read_only, input_schema: '{"type":"string"}', builtin: { name: echo }`, `tools[0] ("a"): a tool's arguments are a JSON object; input_schema's type "string" does not allow one`],
  ['typo.yaml', `name: a, effect: read_only, input_schema: '{"type":"object","propertees":{}}', builtin: { name: echo }`, `tools[0] ("a"): input_schema's key "propertees" at #/propertees is not a JSON Schema keyword, so it checks nothing: did you mean "properties"?`],
  ['port.yaml', 'name: a, effect: read_only, http: { url: "http://127.0.0.1:6667/" }', `tools[0]: tool "a": http.url's port 6667 is one fetch refuses to connect to`],
  ['fallback.yaml', 'name: a, effect: read_only, fallback_tool: a, builtin: { name: echo }', 'tools[0]: tool "a": fallback_tool names the tool itself'],
  ['backoff.yaml', 'name: a, effect: read_only, retry: { initial_backoff_ms: 500, max_backoff_ms: 100 }, builtin: { name: echo }', 'tools[0]: tool "a": retry.initial_backoff_ms (500) is more than retry.max_backoff_ms (100)'],
])('%s: dispatchd exits 1 naming the file and the problem', async (name, fields, problem) => {
  const path = join(dir, name);
  writeFileSync(path, toolFile(fields));
  const run = await runDaemon(['--config', path, '--listen', '127.0.0.1:0']);
  expect(failedStart(run)).toEqual({ exit: 1, level: 'error', code: 'invalid_config', message: expect.stringContaining(`dispatchd: bad config: ${path}: ${problem}`) });
});
