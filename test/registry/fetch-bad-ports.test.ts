import { fetch } from 'undici';
import { FETCH_BAD_PORTS } from '../../src/registry/fetch-bad-ports';
import { expectRefusedAlike, expectTakenAlike } from '../config/tool-refusals';
import { startApp, type TestDispatch } from '../helpers/servers';

// fetch (the undici the HTTP executor calls) never connects to the Fetch standard's "bad ports":
// a tool at one loaded, and every call failed "could not reach the tool ... (unknown)", marked
// recoverable. Such a URL is refused at load, naming the port and why.

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp('tools: []\n');
});
afterAll(() => d.close());

test("the list is the installed undici's, which refuses such a port before connecting", async () => {
  const { badPorts } = require('undici/lib/web/fetch/constants') as { badPorts: readonly string[] };
  expect([...FETCH_BAD_PORTS]).toEqual([...badPorts]);
  await expect(fetch('http://127.0.0.1:25/')).rejects.toMatchObject({ cause: { message: 'bad port' } });
});

const tool = (url: string) => `name: mail, effect: read_only, http: { url: "${url}" }`;
const refusal = (port: number) =>
  `tools[0]: tool "mail": http.url's port ${port} is one fetch refuses to connect to (a "bad port" of the Fetch standard, reserved for other protocols' services): every call would fail before anything is sent; serve the tool on another port`;

test.each([
  ['http://127.0.0.1:25/send', 25],
  ['https://mail.example.com:587/send', 587],
  ['http://127.0.0.1:6667/', 6667],
  ['http://[::1]:10080/x', 10080],
  ['http://127.0.0.1:1/x', 1],
])('%s is refused at load, by the start and by RegisterTools alike', async (url, port) => {
  await expectRefusedAlike(d, tool(url), refusal(port));
});

test('other ports, and the scheme\'s own written out, load', async () => {
  for (const url of ['http://127.0.0.1:8/x', 'http://127.0.0.1:8080/x', 'http://127.0.0.1:80/x', 'https://example.com:443/x', 'http://127.0.0.1:26/x', 'http://127.0.0.1/x']) {
    await expectTakenAlike(d, tool(url));
  }
});
