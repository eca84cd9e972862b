import { createPipeline } from '../../src/app';
import { parseConfig } from '../../src/config';
import { SILENT_LOGGER } from '../../src/log';
import { resolveLimits } from '../../src/options/limits';

// Config mistakes stop the start with the reason, instead of loading a service that quietly does
// something else than meant.

test('limits: an unknown key (also one an object inherits) and a null value are refused', () => {
  expect(() => resolveLimits({ toString: 5 } as never)).toThrow('limits.toString is not a known limit');
  expect(() => resolveLimits({ maxCallsPerTurn: null })).toThrow('limits.maxCallsPerTurn must be a number (leave it out for the default)');
  expect(resolveLimits({ maxCallsPerTurn: 7 }).maxCallsPerTurn).toBe(7);
});

test('a built-in tool that does not exist stops the start, naming the ones that do', () => {
  const config = parseConfig('tools:\n  - { name: greet, effect: read_only, builtin: { name: ehco } }\n', 'typo.yaml');
  expect(() => createPipeline({ config, logger: SILENT_LOGGER })).toThrow(/^typo.yaml: tools\[0\]\.builtin\.name: there is no built-in tool "ehco" \(did you mean echo\? built-ins: .*echo.*\)$/);
  const fine = parseConfig('tools:\n  - { name: greet, effect: read_only, builtin: { name: echo } }\n', 'fine.yaml');
  expect(() => createPipeline({ config: fine, logger: SILENT_LOGGER })).not.toThrow();
});

test('registry: a bad destination entry, an unknown key or a non-list stops the start, naming it', () => {
  expect(() => parseConfig('registry:\n  http_deny: [loopback, 10.0.0.0/33]\n', 'c.yaml')).toThrow(
    'c.yaml: registry.http_deny[1]: "10.0.0.0/33" is not an address, a CIDR range, a host name, *.domain, or one of loopback, private, link-local',
  );
  expect(() => parseConfig('registry:\n  http_denied: [loopback]\n', 'c.yaml')).toThrow('c.yaml: registry.http_denied: unknown key "http_denied" (did you mean http_deny?)');
  expect(() => parseConfig('registry:\n  http_allow: localhost\n', 'c.yaml')).toThrow('c.yaml: registry.http_allow: must be a list');
  expect(() => parseConfig('registry: [loopback]\n', 'c.yaml')).toThrow('c.yaml: registry: must be a mapping');
  expect(parseConfig('registry:\n  http_allow: ["*.tools.svc.cluster.local"]\n  http_deny: [private]\n', 'c.yaml').registry).toEqual({ httpAllow: ['*.tools.svc.cluster.local'], httpDeny: ['private'] });
  expect(resolveLimits({}).maxToolsPerTenant).toBe(1000);
});

test('redis: a key an object inherits (constructor, toString) is refused as unknown, not taken as a spill setting', () => {
  expect(() => parseConfig('redis:\n  url: redis://h:1\n  constructor: 5\n', 'c.yaml')).toThrow('c.yaml: redis.constructor: unknown key "constructor"');
  expect(() => parseConfig('redis:\n  toString: 5\n', 'c.yaml')).toThrow('c.yaml: redis.toString: unknown key "toString"');
});
