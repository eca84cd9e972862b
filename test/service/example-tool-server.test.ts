import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDispatch, type TestDispatch } from '../helpers/servers';

// The README's five minutes try get_weather and send_email from examples/tools.yaml, which name an
// HTTP tool on 127.0.0.1:8081: examples/tool-server.js is that tool. Here it runs as a user runs
// it (its own process, on a free port), behind the example tools file as written.

const ROOT = join(__dirname, '..', '..');

let tools: ChildProcess;
let base: string;
let d: TestDispatch;

beforeAll(async () => {
  tools = spawn(process.execPath, [join(ROOT, 'examples', 'tool-server.js')], { env: { ...process.env, HOST: '127.0.0.1', PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the example tool server did not start: ${out}`)), 10_000);
    tools.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const address = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (address !== undefined) {
        clearTimeout(timer);
        resolve(address);
      }
    });
  });
  const yaml = readFileSync(join(ROOT, 'examples', 'tools.yaml'), 'utf8').replaceAll('http://127.0.0.1:8081', base);
  d = await startDispatch(yaml);
});

afterAll(async () => {
  await d?.close();
  tools?.kill('SIGTERM');
});

const sentCount = async (): Promise<number> => ((await (await fetch(`${base}/sent`)).json()) as { sent: number }).sent;

test('get_weather answers for a city, the same each time, in the units asked', async () => {
  const reply = await d.dispatch.dispatch({
    sessionId: 'example-weather',
    calls: [
      { id: 'a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'b', name: 'get_weather', arguments: '{"city":"Paris","units":"imperial"}' },
    ],
  });
  const [metric, imperial] = reply.results.map((r) => ({ isError: r.isError, body: JSON.parse(r.output) as { city: string; units: string; temperature: number } }));
  expect(metric).toMatchObject({ isError: false, body: { city: 'Paris', units: 'metric' } });
  expect(imperial).toMatchObject({ isError: false, body: { city: 'Paris', units: 'imperial', temperature: Math.round((metric!.body.temperature * 9) / 5 + 32) } });
});

test('send_email sends once per recipient and subject in a session: the second call is a replay', async () => {
  const before = await sentCount();
  const email = (id: string, subject: string) => ({ id, name: 'send_email', arguments: JSON.stringify({ to: 'ada@example.com', subject, body: 'hello' }) });
  const first = await d.dispatch.dispatch({ sessionId: 'example-email', calls: [email('e1', 'Lunch')] });
  const again = await d.dispatch.dispatch({ sessionId: 'example-email', calls: [email('e2', 'Lunch')] });
  const other = await d.dispatch.dispatch({ sessionId: 'example-email', calls: [email('e3', 'Dinner')] });
  expect([first, again, other].map((r) => [r.results[0]!.isError, r.results[0]!.idempotentReplay])).toEqual([
    [false, false],
    [false, true],
    [false, false],
  ]);
  expect(again.results[0]!.output).toBe(first.results[0]!.output);
  expect(await sentCount()).toBe(before + 2);
});

test('the tool server refuses what is not a call of its tools', async () => {
  const post = (path: string, body: string) => fetch(`${base}${path}`, { method: 'POST', body });
  expect((await post('/weather', 'not json')).status).toBe(400);
  expect((await post('/weather', '{"arguments":{"city":" "}}')).status).toBe(400);
  expect((await post('/nowhere', '{}')).status).toBe(404);
  expect((await post('/email', 'x'.repeat(1024 * 1024 + 1))).status).toBe(413);
});
