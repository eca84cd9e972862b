import { parse } from 'yaml';
import { parsePolicies } from '../../src/guards';
import { json, startApp, startToolServer, type TestDispatch, type ToolServer } from '../helpers/servers';
import { expectBurstKeptToShare, expectWaitersKeptToShare } from './tenant-share-checks';
import { plainTool, TWO_TENANTS_AUTH } from './two-tenants';

// `concurrency: { max_in_flight, max_in_flight_per_tenant }` on a tool of the config file: the
// tool's total still holds, and no calling tenant holds more than its share, so one tenant's burst
// no longer takes every slot (before, the cap was one for all tenants: the hostile tenant's burst
// took all of them and every other tenant's calls were refused UNAVAILABLE). One replica here;
// shared through Redis in tenant-share-caps-shared.test.ts.

jest.setTimeout(30_000);

const policies = `
policies:
  - match: capped
    concurrency: { max_in_flight: 3, max_in_flight_per_tenant: 2 }
  - match: queued
    concurrency: { max_in_flight: 2, max_in_flight_per_tenant: 1, wait_ms: 5000 }
`;
const yaml = (url: string) => `${TWO_TENANTS_AUTH}
tools:
${plainTool(url, 'capped')}${plainTool(url, 'queued')}${policies}`;

let tools: ToolServer;
let d: TestDispatch;
beforeAll(async () => {
  tools = await startToolServer({ '/capped': json({ ok: true }, 400), '/queued': json({ ok: true }, 250) });
  d = await startApp(yaml(tools.url));
});
afterAll(async () => {
  await d?.close();
  await tools?.close();
});
beforeEach(() => tools.received.splice(0));

test("one tenant's burst takes its share only: the other tenant's call runs, and the tool's total still holds", () => expectBurstKeptToShare([d], tools, 'on this dispatch replica'));

test("with wait_ms, a tenant's calls waiting for its own share never hold up another tenant's", () => expectWaitersKeptToShare([d], tools));

test('max_in_flight_per_tenant is an integer from 1 to max_in_flight, and needs max_in_flight', () => {
  const problem = (cap: string) => {
    try {
      parsePolicies(parse(`- concurrency: ${cap}`) as unknown[], 'dispatch.yaml');
    } catch (error) {
      return (error as Error).message;
    }
    return 'loaded';
  };
  expect(problem('{ max_in_flight: 4, max_in_flight_per_tenant: 4 }')).toBe('loaded');
  expect(problem('{ max_in_flight: 4, max_in_flight_per_tenant: 5 }')).toBe('dispatch.yaml: policies[0].concurrency.max_in_flight_per_tenant: must be at most max_in_flight (4), got 5');
  expect(problem('{ max_in_flight: 4, max_in_flight_per_tenant: 0 }')).toBe('dispatch.yaml: policies[0].concurrency.max_in_flight_per_tenant: must be a positive integer, got 0');
  expect(problem('{ max_in_flight: 4, max_in_flight_per_tenant: 1.5 }')).toBe('dispatch.yaml: policies[0].concurrency.max_in_flight_per_tenant: must be a positive integer, got 1.5');
  expect(problem('{ max_in_flight_per_tenant: 2 }')).toBe(
    "dispatch.yaml: policies[0].concurrency.max_in_flight: is needed with max_in_flight_per_tenant: each tenant's share is a part of the tool's limit for all tenants together (write max_in_flight: N, N at least the share)",
  );
});
