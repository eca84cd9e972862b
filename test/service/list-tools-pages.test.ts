import { toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { GetToolStatsResponseSchema, ListToolsResponseSchema, type GetToolStatsResponse, type ListToolsResponse } from '../../gen/dispatch/v1/registry_pb';
import { allPages } from '../../src/client';
import { failure } from '../contract/error-info';
import { dispatchctlAt } from '../helpers/dispatchctl';
import { startApp, type TestDispatch } from '../helpers/servers';

// ListTools and GetToolStats answer a page at a time (Google AIP-158), each answer within
// limits.max_response_bytes. Before: 1,000 tools with 32 KB descriptions (within every documented
// limit) made a 32 MB ListTools answer, past grpc-js's max send length: the client got
// RESOURCE_EXHAUSTED every time and could not list its tools at all. A tenant's RPC tools take at
// most max_schema_bytes_per_tenant (2 MiB by default) of schemas and as much again of the rest of
// their specs, raised here; the config file's and MCP servers' tools, listed to every tenant, count
// for none. 400 tools of 32 KB (12.8 MB) show the same, in four answers.

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
const TOOLS = 400;
const DESCRIPTION = 'd'.repeat(32_000);
const nameOf = (i: number) => `tool_${String(i).padStart(4, '0')}`;
const spec = (name: string, description = DESCRIPTION, inputSchema = '{"type":"object"}') => ({ name, description, effect: 1, inputSchema, executor: { case: 'builtin' as const, value: { name: 'echo' } } });

const ECHO = `
limits: { max_schema_bytes_per_tenant: 67108864 }
tools:
  - name: echo
    effect: read_only
    builtin: { name: echo }
`;

let d: TestDispatch;
beforeAll(async () => {
  d = await startApp(ECHO);
  // 100 specs of 32 KB a request: 3.2 MB, under max_message_bytes.
  for (let first = 0; first < TOOLS; first += 100) {
    const tools = Array.from({ length: 100 }, (_, i) => spec(nameOf(first + i)));
    expect((await d.registry.registerTools({ tools })).registered).toBe(100);
  }
});
afterAll(() => d.close());

/** Every page of ListTools with `pageSize`, with each answer's encoded size. */
async function listAll(app: TestDispatch, pageSize = 0): Promise<{ pages: ListToolsResponse[]; bytes: number[]; names: string[] }> {
  const pages: ListToolsResponse[] = [];
  for await (const page of allPages((pageToken) => app.registry.listTools({ pageSize, pageToken }), 2000)) pages.push(page);
  return { pages, bytes: pages.map((page) => toBinary(ListToolsResponseSchema, page).length), names: pages.flatMap((page) => page.tools.map((t) => t.name)) };
}

const ALL = ['echo', ...Array.from({ length: TOOLS }, (_, i) => nameOf(i))];

test('ListTools pages through 400 tools of 32 KB descriptions, each answer within max_response_bytes (4 MiB)', async () => {
  const { pages, bytes, names } = await listAll(d);
  expect(names).toEqual(ALL);
  // 12.8 MB in answers of at most 4 MiB: 4 of them, each nearly full but the last.
  expect(pages.length).toBe(Math.ceil((TOOLS * 32_010) / (4 * MiB - 1024 - 8 * 1024)));
  for (const size of bytes) expect(size).toBeLessThanOrEqual(4 * MiB);
  for (const size of bytes.slice(0, -1)) expect(size).toBeGreaterThan(4 * MiB - 40_000);
  expect(pages.map((page) => page.nextPageToken === '')).toEqual([...pages.slice(1).map(() => false), true]);
  // The descriptions come whole, and no tool is left out.
  expect(pages.flatMap((page) => page.tools).every((t) => t.name === 'echo' || t.description === DESCRIPTION)).toBe(true);
  expect(pages.flatMap((page) => page.warnings)).toEqual([]);
});

test('page_size bounds a page; 0 is as many as fit; the token is opaque and the next page starts after it', async () => {
  const first = await d.registry.listTools({ pageSize: 7 });
  expect(first.tools.map((t) => t.name)).toEqual(ALL.slice(0, 7));
  expect(first.nextPageToken).not.toContain(ALL[6]);
  const second = await d.registry.listTools({ pageSize: 3, pageToken: first.nextPageToken });
  expect(second.tools.map((t) => t.name)).toEqual(ALL.slice(7, 10));
  const { pages, names } = await listAll(d, 250);
  expect(names).toEqual(ALL);
  // 250 tools of 32 KB take 8 MB: the byte bound cuts each page first.
  expect(pages.every((page) => page.tools.length < 250)).toBe(true);
  // page_size 1, the smallest, follows the token one tool at a time.
  let token = second.nextPageToken;
  for (const name of ALL.slice(10, 14)) {
    const one = await d.registry.listTools({ pageSize: 1, pageToken: token });
    expect(one.tools.map((t) => t.name)).toEqual([name]);
    token = one.nextPageToken;
  }
  // A page_size the bytes never cut (9 x 32 KB) bounds every page through the whole listing, to
  // its last page (401 = 44 x 9 + 5). Walking 1,001 tools at page_size 1 (1,001 answers) took 5 s.
  const small = await listAll(d, 9);
  expect(small.pages).toHaveLength(45);
  expect(small.pages.map((page) => page.tools.length)).toEqual([...Array(44).fill(9), 5]);
  expect(small.names).toEqual(ALL);
});

test('a page_token this service did not give is INVALID_ARGUMENT naming page_token', async () => {
  for (const pageToken of ['not a token!', Buffer.from('tool_0001').toString('base64url'), 'x'.repeat(2000)]) {
    const info = await failure(d.registry.listTools({ pageToken }));
    expect(info).toMatchObject({ code: status.INVALID_ARGUMENT, reason: 'INVALID_ARGUMENT', metadata: { field: 'page_token' } });
    expect(info.details).toBe('page_token is not one this service gave (the next_page_token of a previous answer); leave it empty for the first page');
    expect(await failure(d.registry.getToolStats({ pageToken }))).toMatchObject({ code: status.INVALID_ARGUMENT, metadata: { field: 'page_token' } });
  }
});

test('dispatchctl tools list shows all 401 tools; stats shows every tool', async () => {
  const ctl = dispatchctlAt(() => d.address);
  const listed = await ctl('tools', 'list');
  expect(listed.code).toBe(0);
  expect(listed.out.split('\n').map((line) => line.split(' ')[0])).toEqual(ALL);
  const stats = await ctl('stats');
  expect(stats.code).toBe(0);
  expect(stats.out.split('\n').filter((line) => /^\S/.test(line)).map((line) => line.split(' ')[0])).toEqual(ALL);
});

test('GetToolStats pages too: 1,001 tools within a max_response_bytes of 64 KiB', async () => {
  const app = await startApp(ECHO.replace('{ max_schema', '{ max_response_bytes: 65536, max_schema'));
  // Short specs: 1,000 tools' stats take more than one answer of 64 KiB (401 fit in one).
  const count = 1000;
  const all = ['echo', ...Array.from({ length: count }, (_, i) => nameOf(i))];
  try {
    // In one request (1,000 short specs): in four, the registering took ~2 s longer.
    expect((await app.registry.registerTools({ tools: Array.from({ length: count }, (_, i) => spec(nameOf(i), 'short')) })).registered).toBe(count);
    const pages: GetToolStatsResponse[] = [];
    for await (const page of allPages((pageToken) => app.registry.getToolStats({ pageToken }), 2000)) pages.push(page);
    expect(pages.flatMap((page) => page.stats.map((s) => s.tool))).toEqual(all);
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(toBinary(GetToolStatsResponseSchema, page).length).toBeLessThanOrEqual(65_536);
    const sized = await app.registry.getToolStats({ pageSize: 5 });
    expect(sized.stats.map((s) => s.tool)).toEqual(all.slice(0, 5));
    // A named tool is one answer, as before.
    expect((await app.registry.getToolStats({ tool: nameOf(500) })).stats.map((s) => s.tool)).toEqual([nameOf(500)]);
  } finally {
    await app.close();
  }
});

test('a tool that alone would not fit has its description cut with a marker, or is left out with a warning', async () => {
  const app = await startApp(`limits: { max_response_bytes: 65536 }\ntools: []\n`);
  try {
    const euros = '€'.repeat(32_768);
    const schema = JSON.stringify({ type: 'object', description: 's'.repeat(100_000) });
    await app.registry.registerTools({ tools: [spec('a_small', 'small'), spec('b_long', euros), spec('c_huge', 'x', schema), spec('d_small', 'small')] });
    const { pages, bytes, names } = await listAll(app);
    for (const size of bytes) expect(size).toBeLessThanOrEqual(65_536);
    expect(names).toEqual(['a_small', 'b_long', 'd_small']);
    const long = pages.flatMap((page) => page.tools).find((t) => t.name === 'b_long')!;
    expect(long.description).toMatch(/^€+ \[description cut to (\d+) of 32768 characters so that the listing fits in max_response_bytes\]$/);
    expect(Number(/cut to (\d+)/.exec(long.description)![1])).toBeGreaterThan(20_000);
    expect(pages.flatMap((page) => page.warnings)).toEqual([
      expect.stringMatching(/^tool "c_huge" is left out of this listing: its spec takes 1000\d\d bytes without its description, more than an answer of max_response_bytes \(65536\) has room for; it can still be called$/),
    ]);
    const ctl = await dispatchctlAt(() => app.address)('tools', 'list');
    expect(ctl.out.split('\n').map((line) => line.split(' ')[0])).toEqual(['a_small', 'b_long', 'd_small']);
    expect(ctl.err).toContain('dispatchctl: tool "c_huge" is left out of this listing');
  } finally {
    await app.close();
  }
});
