// The redaction worker (src/middleware/redaction-worker.ts): outputs past INLINE_REDACTION_CHARS
// are redacted in a worker thread, byte for byte as on the event loop, tenants in turn; a job
// whose call ended before its turn is dropped, and one the thread could not redact (out of
// memory, too slow, closed) fails, never giving its text back unredacted. Needs dist/.
import { createRedactionWorker, INLINE_REDACTION_CHARS, redaction, redactSecrets, RedactionWorkerError, type RedactionCall, type RedactionOptions, type RedactionWorker } from '../../src/middleware';
import { abortableCall } from '../helpers/abortable-call';
import type { Invocation, ToolOutput } from '../../src/pipeline';

jest.setTimeout(30_000);

const call = (tenant: string, deadline = Date.now() + 60_000): RedactionCall => ({ tenant, deadline, onAbort: () => () => undefined });

const abortable = abortableCall;

const reasonOf = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'redacted',
    (error: unknown) => (error instanceof RedactionWorkerError ? error.reason : `other: ${String(error)}`),
  );

/** Texts in the style of the redaction tests: every kind of secret, in text, JSON, escapes, PEM, base64, and none. */
const SECRETS = [
  'Authorization: Bearer abcDEF123456789xyz',
  'api_key=abcd1234efgh5678',
  'AKIAIOSFODNN7EXAMPLE',
  'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'ghp_1234567890abcdefghijklmnopqrstuvwxyzAB',
  'xoxb-1234567890-0987654321-AbCdEfGhIjKl',
  '9fT2kQ7xLm4ZpR8vW1nB6cY3hJ0sD5gA7eK2uP9q',
  'postgres://admin:s3cr3tpass@db.internal:5432/app',
  'password: hunter2',
];
const big = (unit: string): string => unit.repeat(Math.ceil((INLINE_REDACTION_CHARS + 1) / unit.length));
const CORPUS: readonly string[] = [
  '',
  'nothing to redact here',
  SECRETS.join('\n'),
  big(`${SECRETS.join('\n')}\n`),
  big(JSON.stringify({ items: SECRETS.map((s, i) => ({ id: i, token: 'abcd1234efgh5678', note: s })) })),
  big(`${SECRETS.map((s) => JSON.stringify({ msg: s, password: 'p&ss' })).join('\n')}\n`),
  big('{"dsn":"postgres:\\/\\/admin:pw@db","pass\\u0077ord":"hunter2"}\n'),
  big(`${Buffer.from(`${SECRETS.join('\n')}\n`).toString('base64').replace(/.{60}/g, '$&\\n')}`),
  big('héllo wörld 🔑 password: ünïcødé \ud800 lone surrogates \udc00 '),
  big('pwd="a" '),
  big('the quick brown fox jumps over the lazy dog. '),
];

describe('the worker redacts as the event loop does', () => {
  let worker: RedactionWorker;
  afterEach(() => worker.close());

  test.each<[string, RedactionOptions]>([
    ['default options', {}],
    ['other entropy options', { minEntropyLength: 20, entropyFactor: 0.7 }],
  ])('each text of the corpus, byte for byte (%s)', async (_name, options) => {
    worker = createRedactionWorker(options);
    const there = await worker.redact(CORPUS, call('t'), false);
    const here = CORPUS.map((text) => redactSecrets(text, options));
    expect(there.length).toBe(here.length);
    for (let i = 0; i < here.length; i++) expect([i, there[i] === here[i]]).toEqual([i, true]);
    // Redaction did happen in the big texts holding secrets.
    expect(there[3]).toContain('[REDACTED:');
  });

  test('the middleware sends an output past the threshold to the worker and one at it inline, with the same result', async () => {
    const redacts: number[] = [];
    const real = createRedactionWorker();
    worker = { redact: (texts, c, keep) => (redacts.push(texts.length), real.redact(texts, c, keep)), close: () => real.close() };
    const text = big(`${SECRETS.join('\n')}\n`);
    const invoke = (output: ToolOutput) => {
      const invocation = { tool: { spec: {}, readOnly: true }, args: {}, ctx: call('t') } as unknown as Invocation;
      return redaction({}, worker)(() => Promise.resolve(output))(invocation);
    };
    // Text and warnings together at the threshold: inline.
    const atThreshold = text.slice(0, INLINE_REDACTION_CHARS - 'token=abcd1234efgh5678'.length);
    expect(await invoke({ text: atThreshold, warnings: ['token=abcd1234efgh5678'] })).toEqual({ text: redactSecrets(atThreshold), warnings: [redactSecrets('token=abcd1234efgh5678')] });
    expect(redacts).toEqual([]);
    expect(await invoke({ text, warnings: ['token=abcd1234efgh5678'] })).toEqual({ text: redactSecrets(text), warnings: [redactSecrets('token=abcd1234efgh5678')] });
    expect(await invoke({ text })).toEqual({ text: redactSecrets(text), warnings: undefined });
    expect(redacts).toEqual([2, 1]);
  });
});

describe('jobs wait per tenant, taken in turn', () => {
  let worker: RedactionWorker;
  afterEach(() => worker.close());

  test("tenant A's many big outputs do not hold back tenant B's one", async () => {
    worker = createRedactionWorker();
    const text = big('password: x\n').repeat(4);
    const done: string[] = [];
    const job = (name: string, tenant: string) => worker.redact([text], call(tenant), false).then(() => void done.push(name));
    await Promise.all([job('a1', 'A'), job('a2', 'A'), job('a3', 'A'), job('a4', 'A'), job('b1', 'B')]);
    // a1 ran at once; then A and B in turn: B's one job before A's third.
    expect(done).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  test('a job whose call is aborted, or whose deadline passed, before its turn is dropped; a late answer is kept', async () => {
    worker = createRedactionWorker();
    const text = big('password: x\n');
    const first = worker.redact([text], call('A'), false);
    const cancelled = abortable('B');
    const dropped = worker.redact([text], cancelled, false);
    const pastDeadline = worker.redact([text], call('C', Date.now() + 1), false);
    cancelled.abort();
    expect(await reasonOf(dropped)).toBe('dropped');
    await new Promise((r) => setTimeout(r, 5));
    expect(await reasonOf(first)).toBe('redacted');
    expect(await reasonOf(pastDeadline)).toBe('dropped');
    // An output whose call had ended when it came: a side-effecting call's late answer waits its turn; another is dropped.
    const ended = abortable('D');
    ended.abort();
    expect(await worker.redact(['password: hunter2'], ended, true)).toEqual([redactSecrets('password: hunter2')]);
    expect(await reasonOf(worker.redact(['password: hunter2'], ended, false))).toBe('dropped');
  });
});

describe('a job the thread cannot redact fails alone', () => {
  let worker: RedactionWorker;
  afterEach(() => worker.close());

  test('out of memory: that job fails, the next one starts a new thread', async () => {
    worker = createRedactionWorker({}, { heapMb: 16 });
    const text = JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ password: `hunter2hunter2${i}`, note: `n${i}` })));
    const failed = worker.redact([text], call('A'), false);
    const after = worker.redact(['password: hunter2'], call('B'), false);
    await expect(failed).rejects.toMatchObject({ reason: 'crashed', message: expect.stringContaining('memory') });
    expect(await after).toEqual([redactSecrets('password: hunter2')]);
  });

  test('past its time bound: that job fails, the next one is redacted', async () => {
    // ~2.4 Mi characters of the slowest hostile text: ~2.7 s of redaction.
    worker = createRedactionWorker({}, { timeoutMs: 500 });
    const slow = worker.redact(['pwd="a" '.repeat(300_000)], call('A'), false);
    await expect(slow).rejects.toMatchObject({ reason: 'timed_out', message: 'redacting it took longer than 500 ms' });
    expect(await worker.redact(['password: hunter2'], call('A'), false)).toEqual([redactSecrets('password: hunter2')]);
  });

  test('closed: waiting and running jobs fail, and so does any later one', async () => {
    worker = createRedactionWorker();
    const text = big('password: x\n');
    const running = reasonOf(worker.redact([text], call('A'), false));
    const waiting = reasonOf(worker.redact([text], call('B'), false));
    await worker.close();
    expect([await running, await waiting, await reasonOf(worker.redact([text], call('C'), false))]).toEqual(['closed', 'closed', 'closed']);
  });
});
