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
  expect(() => createPipeline({ config, logger: SILENT_LOGGER })).toThrow(/^tool "greet": there is no built-in tool "ehco" \(built-ins: .*echo.*\)$/);
  const fine = parseConfig('tools:\n  - { name: greet, effect: read_only, builtin: { name: echo } }\n', 'fine.yaml');
  expect(() => createPipeline({ config: fine, logger: SILENT_LOGGER })).not.toThrow();
});
