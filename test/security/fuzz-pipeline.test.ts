// Arbitrary JSON into the pipeline (fast-check): arguments, tool schemas and tool outputs. Every
// Dispatch answers well-formed results (or a contract hard error) within its deadline, and the
// server keeps serving.
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';
import { createLogger } from '../../src/log';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { startAuthApp, type AuthApp } from './support/auth-app';
import { resultProblems } from './support/result-checks';

const DEADLINE_MS = 10_000;
/** Runs per property; FUZZ_RUNS raises it for a longer search. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const OUT_CHARS = 200;

interface Answer {
  readonly status: number;
  readonly body: Buffer;
  readonly contentType: string;
}
const answers = new Map<string, Answer>();
const errors: string[] = [];
let tools: ToolServer;
let app: AuthApp;
let runId = 0;

beforeAll(async () => {
  const answer = (req: { body: Record<string, unknown> }, res: ServerResponse) => {
    const a = answers.get(String(req.body.tool_call_id)) ?? { status: 200, body: Buffer.from('ok'), contentType: 'text/plain' };
    res.writeHead(a.status, { 'content-type': a.contentType }).end(a.body);
  };
  tools = await startToolServer({ '/ok': (_q, res) => void res.writeHead(200).end('{"ok":true}'), '/out': answer });
  const http = (name: string, path: string, extra = '') => `  - name: ${name}\n    effect: read_only\n    timeout_ms: 2000\n    retry: { max_attempts: 1 }\n${extra}    http: { url: "${tools.url}${path}" }\n`;
  const schema = `'{"type":"object","properties":{"n":{"type":"number"},"flag":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},"mode":{"enum":["fast","slow"]},"opt":{"type":"string","default":"d"}},"required":["n"]}'`;
  app = await startAuthApp(
    `tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
${http('typed', '/ok', `    input_schema: ${schema}\n`)}${http('lenient', '/ok', `    lenient_arguments: true\n    input_schema: ${schema}\n`)}${http('out', '/out', `    max_result_chars: ${OUT_CHARS}\n`)}${http('out_json', '/out', `    max_result_chars: ${OUT_CHARS}\n    returns_json: true\n`)}  - name: write
    effect: side_effect
    http: { url: "${tools.url}/ok" }
`,
    { logger: createLogger('error', (l) => errors.push(l) > 0) },
  );
});
afterAll(async () => {
  await app.close();
  await tools.close();
});

const brokenJson = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? '').chain((t) => fc.nat({ max: Math.max(0, t.length) }).map((cut) => t.slice(0, cut))),
  fc.constantFrom('', '{', '{"n":', '{"n":1,}', "{'n':1}", '{"n":NaN}', '[1,2', '"\\ud800"', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}'),
);
const argumentsText = fc.oneof(fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v) ?? 'null'), brokenJson, fc.record({ n: fc.jsonValue(), mode: fc.string(), tags: fc.jsonValue() }, { requiredKeys: [] }).map((v) => JSON.stringify(v)));

async function dispatchChecked(calls: { id: string; name: string; arguments: string }[], session: string): Promise<string[]> {
  const started = Date.now();
  try {
    const res = await app.dispatch.dispatch({ sessionId: session, calls }, { deadlineMs: DEADLINE_MS });
    const problems = res.results.length === calls.length ? [] : [`${res.results.length} results for ${calls.length} calls`];
    res.results.forEach((r, i) => problems.push(...resultProblems(r, calls[i]!.id, 8_000).map((p) => `${calls[i]!.name}: ${p}`)));
    return problems;
  } catch (error) {
    const e = error as grpc.ServiceError;
    if (e.code === grpc.status.ABORTED && /loop detected|recovery/i.test(e.details)) return [];
    return [`hard error ${grpc.status[e.code]} ${e.details} after ${Date.now() - started} ms`];
  }
}

test('arbitrary argument text, valid JSON or not, gets well-formed results', async () => {
  const call = fc.record({ name: fc.constantFrom('echo', 'typed', 'lenient', 'write', 'no_such_tool'), arguments: argumentsText });
  await fc.assert(
    fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 8 }), async (calls) => {
      const run = ++runId;
      const problems = await dispatchChecked(calls.map((c, i) => ({ id: `r${run}c${i}`, ...c })), `args-${run}`);
      expect(problems).toEqual([]);
    }),
    { numRuns: RUNS },
  );
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(errors).toEqual([]);
});

const schemaLike: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.boolean(),
    fc.record(
      {
        type: fc.oneof(fc.constantFrom('object', 'string', 'number', 'integer', 'boolean', 'array', 'null', 'bogus'), fc.array(fc.constantFrom('string', 'null', 'number'), { maxLength: 3 })),
        properties: fc.dictionary(fc.string({ maxLength: 6 }), tie('schema'), { maxKeys: 4 }),
        items: tie('schema'),
        required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
        enum: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
        const: fc.jsonValue({ maxDepth: 2 }),
        default: fc.jsonValue({ maxDepth: 2 }),
        minimum: fc.double(),
        maxLength: fc.integer({ min: -2, max: 10 }),
        additionalProperties: fc.oneof(fc.boolean(), tie('schema')),
        anyOf: fc.array(tie('schema'), { maxLength: 3 }),
        allOf: fc.array(tie('schema'), { maxLength: 3 }),
        not: tie('schema'),
        $ref: fc.constantFrom('#', '#/properties/a', '#/$defs/x', `http://127.0.0.1:1/schema`, 'urn:nowhere'),
        $defs: fc.dictionary(fc.constantFrom('x', 'y'), tie('schema'), { maxKeys: 2 }),
        format: fc.constantFrom('email', 'date-time', 'uri', 'no-such-format'),
        pattern: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('^(a+)+$', '(?<=a)b', '\\p{L}+', '[', '(a|aa)*c')),
        patternProperties: fc.dictionary(fc.constantFrom('^x', '(x+x+)+y', '[a-'), tie('schema'), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
  ),
})).schema;

test('arbitrary JSON as input_schema is registered or refused INVALID_ARGUMENT, and registered ones dispatch', async () => {
  const schemaText = fc.oneof(schemaLike.map((s) => JSON.stringify(s)), fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? ''), fc.string({ maxLength: 100 }));
  let registered = 0;
  await fc.assert(
    fc.asyncProperty(schemaText, fc.boolean(), fc.array(argumentsText, { minLength: 1, maxLength: 3 }), async (inputSchema, lenient, args) => {
      const run = ++runId;
      const name = `fz_${run}`;
      let code: grpc.status = grpc.status.OK;
      try {
        await app.registry.registerTools({ tools: [{ name, inputSchema, lenientArguments: lenient, effect: 1, executor: { case: 'builtin', value: { name: 'echo' } } }] }, { deadlineMs: DEADLINE_MS });
      } catch (error) {
        code = (error as grpc.ServiceError).code;
      }
      expect([grpc.status.OK, grpc.status.INVALID_ARGUMENT]).toContain(code);
      if (code !== grpc.status.OK) return;
      registered++;
      expect(await dispatchChecked(args.map((a, i) => ({ id: `c${i}`, name, arguments: a })), `schema-${run}`)).toEqual([]);
      await app.registry.removeTool({ name });
    }),
    { numRuns: RUNS },
  );
  expect(registered).toBeGreaterThan(0);
  expect(errors).toEqual([]);
});

test('arbitrary tool outputs (text, bytes, JSON, any status) become well-formed, bounded results', async () => {
  const answer = fc.record({
    status: fc.constantFrom(200, 200, 200, 201, 204, 302, 400, 404, 422, 429, 500, 503),
    body: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 400 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? '')),
      fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 20_000 })).map(([s, n]) => Buffer.from(s.repeat(n))),
    ),
    contentType: fc.constantFrom('text/plain', 'application/json', 'application/octet-stream', 'text/html; charset=latin1'),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('out', 'out_json'), answer), { minLength: 1, maxLength: 6 }), async (plan) => {
      const run = ++runId;
      const calls = plan.map(([name, a], i) => {
        answers.set(`o${run}c${i}`, a);
        return { id: `o${run}c${i}`, name, arguments: `{"i":${i}}` };
      });
      const res = await app.dispatch.dispatch({ sessionId: `out-${run}`, calls }, { deadlineMs: DEADLINE_MS });
      for (const [i, r] of res.results.entries()) {
        expect(resultProblems(r, calls[i]!.id, OUT_CHARS + 2_000)).toEqual([]);
        if (!r.isError) expect([...r.output].length).toBeLessThanOrEqual(OUT_CHARS);
        if (r.truncated) {
          const whole = await app.dispatch.readResult({ resultHandle: r.resultHandle, limit: 65_536 });
          expect(whole.totalChars).toBeGreaterThan(OUT_CHARS);
        }
      }
      for (const c of calls) answers.delete(c.id);
    }),
    { numRuns: RUNS },
  );
  expect(errors).toEqual([]);
});
