// The soak (issue 10): 10,000 fuzzed calls against `node bin/dispatchd.js` in a child process
// whose heap is capped, with the server's RSS read from /proc before and after; and a tool
// answering 100 MB, which the server reads only up to its bound and survives.
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createDispatchClient } from '../../src/client';
import { startToolServer, type ToolServer } from '../helpers/servers';
import { ensureDist, startChildServer, type ChildServer } from './support/child-server';
import { healthy } from './support/raw-client';
import { resultProblems } from './support/result-checks';

/** Calls of the soak proper, after a warm-up of WARMUP_CALLS. */
const SOAK_CALLS = 10_000;
const WARMUP_CALLS = 3_000;
const CALLS_PER_TURN = 50;
const TURNS_IN_FLIGHT = 4;
/**
 * The server's V8 heap cap (`--max-old-space-size`, MiB): a leak ends in a crash instead of a
 * slowly growing heap, and the heap reaches its steady size within the warm-up.
 */
const HEAP_CAP_MB = 128;
/** RSS growth allowed from after the warm-up to the end of the soak (about 3 KB per call). */
const RSS_GROWTH_BOUND = 32 * 1024 * 1024;
/** Wall time allowed for the soak proper (about 30 s alone on 2 cores; the rest is headroom for a busy CI). */
const SOAK_TIME_BOUND_MS = 120_000;
const MiB = 1024 * 1024;

let tools: ToolServer;
let server: ChildServer;
let client: ReturnType<typeof createDispatchClient>;
let bigSent = 0;
const seed = Number(process.env.SOAK_SEED ?? Date.now() % 2 ** 31);
const outputs = fc.sample(
  fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }).map((s) => ({ status: 200, body: Buffer.from(s) })),
    fc.uint8Array({ maxLength: 300 }).map((a) => ({ status: 200, body: Buffer.from(a) })),
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ status: 200, body: Buffer.from(JSON.stringify(v) ?? '') })),
    fc.integer({ min: 1, max: 3_000 }).map((n) => ({ status: 200, body: Buffer.from('y'.repeat(n)) })),
    fc.constantFrom(400, 404, 500, 503).map((status) => ({ status, body: Buffer.from('{"error":"no"}') })),
  ),
  { numRuns: 256, seed },
);

function hundredMegabytes(_req: unknown, res: ServerResponse): void {
  const chunk = Buffer.alloc(MiB, 'z');
  res.writeHead(200, { 'content-type': 'text/plain' });
  let sent = 0;
  const pump = () => {
    while (sent < 100 * MiB && !res.destroyed) {
      sent += chunk.length;
      bigSent = sent;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => (bigSent = sent));
  pump();
}

beforeAll(async () => {
  ensureDist();
  tools = await startToolServer({
    '/ok': (_q, res) => void res.writeHead(200).end('{"ok":true}'),
    '/out': (req, res) => {
      const pick = createHash('sha1').update(String(req.body.tool_call_id)).digest().readUInt32BE(0) % outputs.length;
      void res.writeHead(outputs[pick]!.status).end(outputs[pick]!.body);
    },
    '/big': hundredMegabytes,
  });
  const http = (name: string, path: string, extra = '', timeoutMs = 5000) => `  - name: ${name}\n    effect: read_only\n    retry: { max_attempts: 1 }\n    timeout_ms: ${timeoutMs}\n${extra}    http: { url: "${tools.url}${path}" }\n`;
  const schema = `'{"type":"object","properties":{"n":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},"required":["n"]}'`;
  server = await startChildServer(`tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
${http('typed', '/ok', `    input_schema: ${schema}\n`)}${http('lenient', '/ok', `    lenient_arguments: true\n    input_schema: ${schema}\n`)}${http('out', '/out', '    max_result_chars: 500\n')}${http('big', '/big', '', 20_000)}`, HEAP_CAP_MB);
  client = createDispatchClient(server.address);
}, 180_000);
afterAll(async () => {
  client?.close();
  await server?.stop();
  await tools?.close();
});

const callArb = fc.record({
  name: fc.constantFrom('echo', 'typed', 'lenient', 'out', 'out', 'no_such_tool'),
  arguments: fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
    fc.record({ n: fc.jsonValue({ maxDepth: 1 }), tags: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 120 }),
  ),
});

interface SoakTally {
  results: number;
  errors: number;
  aborted: number;
  problems: string[];
}

/** Sends `count` fuzzed calls in turns of CALLS_PER_TURN, TURNS_IN_FLIGHT at a time; each turn's session is ended after it. */
/** The median of three RSS readings over a second, so one reading at a GC peak does not decide. */
async function settledRss(): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 350));
    readings.push(server.rss());
  }
  return readings.sort((a, b) => a - b)[1]!;
}

async function soak(count: number, label: string, sample: number): Promise<SoakTally> {
  const calls = fc.sample(callArb, { numRuns: count, seed: seed + sample });
  const tally: SoakTally = { results: 0, errors: 0, aborted: 0, problems: [] };
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const start = next;
      next += CALLS_PER_TURN;
      const turn = calls.slice(start, start + CALLS_PER_TURN).map((c, i) => ({ id: `${label}-${start + i}`, ...c }));
      const sessionId = `${label}-${start}`;
      try {
        const res = await client.dispatch({ sessionId, calls: turn }, { deadlineMs: 30_000 });
        for (const [i, r] of res.results.entries()) {
          tally.results++;
          if (r.isError) tally.errors++;
          tally.problems.push(...resultProblems(r, turn[i]!.id, 8_000));
        }
      } catch (error) {
        const e = error as grpc.ServiceError;
        if (e.code === grpc.status.ABORTED) tally.aborted++;
        else tally.problems.push(`turn ${sessionId}: ${grpc.status[e.code]} ${e.details}`);
      }
      await client.endSession({ sessionId });
    }
  };
  await Promise.all(Array.from({ length: TURNS_IN_FLIGHT }, worker));
  return tally;
}

test(`${SOAK_CALLS} fuzzed calls: well-formed answers, bounded time, RSS growth under ${RSS_GROWTH_BOUND / MiB} MiB after a warm-up`, async () => {
  await soak(WARMUP_CALLS, 'warm', 1);
  const before = await settledRss();
  const started = Date.now();
  const tally = await soak(SOAK_CALLS, 'soak', 2);
  const elapsed = Date.now() - started;
  const after = await settledRss();
  const raw = new grpc.Client(server.address, grpc.credentials.createInsecure());
  const up = await healthy(raw);
  raw.close();
  console.log(`soak seed=${seed}: ${SOAK_CALLS} calls in ${elapsed} ms (${Math.round((SOAK_CALLS / elapsed) * 1000)} calls/s), ${tally.results} results (${tally.errors} soft errors), ${tally.aborted} turns aborted by loop detection; RSS ${(before / MiB).toFixed(1)} -> ${(after / MiB).toFixed(1)} MiB`);
  expect(tally.problems.slice(0, 10)).toEqual([]);
  expect(tally.results + tally.aborted * CALLS_PER_TURN).toBeGreaterThanOrEqual(SOAK_CALLS);
  expect(elapsed).toBeLessThan(SOAK_TIME_BOUND_MS);
  expect(after - before).toBeLessThan(RSS_GROWTH_BOUND);
  expect([up, server.alive()]).toEqual([true, true]);
}, 180_000);

test('a tool answering 100 MB: the server stops reading at its bound, answers a bounded result, and survives', async () => {
  const before = server.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, server.rss())), 20);
  try {
    for (let i = 0; i < 3; i++) {
      const res = await client.dispatch({ sessionId: `big-${i}`, calls: [{ id: 'b', name: 'big', arguments: '{}' }] }, { deadlineMs: 60_000 });
      const r = res.results[0]!;
      expect(resultProblems(r, 'b', 8_000)).toEqual([]);
      expect([...r.output].length).toBeLessThanOrEqual(8_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(bigSent).toBeLessThan(100 * MiB);
    }
  } finally {
    clearInterval(sampler);
  }
  const after = server.rss();
  console.log(`100 MB tool answers x3: RSS ${(before / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, after ${(after / MiB).toFixed(1)} MiB; the tool sent at most ${(bigSent / MiB).toFixed(0)} MiB`);
  expect(peak - before).toBeLessThan(400 * MiB);
  const ok = await client.dispatch({ sessionId: 'after-big', calls: [{ id: 'e', name: 'echo', arguments: '{"still":"here"}' }] });
  expect(ok.results[0]!.output).toBe('{"still":"here"}');
  expect(server.alive()).toBe(true);
}, 120_000);
