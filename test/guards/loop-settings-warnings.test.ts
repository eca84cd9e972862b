import { status } from '@grpc/grpc-js';
import type { Logger } from '../../src/log';
import { json, startApp, startToolServer, type ToolServer } from '../helpers/servers';

// Settings that turn loop detection off without a word (DESIGN section 6) are warned of at
// start-up: a streak is counted within the session's loop window, so `limits.loop_window` below a
// threshold (the default stop_threshold 10, or a tool's own) means that threshold is never reached
// (loop_window 5: 30 identical calls, warned from the 3rd, never stopped), and a warning threshold
// above its stop (or block) threshold never warns. Real HTTP tools; the app's own logger.

let tools: ToolServer;
beforeAll(async () => {
  tools = await startToolServer({ '/same': json({ same: true }) });
});
afterAll(async () => {
  await tools?.close();
});

/** A logger that keeps the warnings. */
function warningsLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const ignore = () => undefined;
  return { logger: { debug: ignore, info: ignore, error: ignore, warn: (message) => void warnings.push(message) }, warnings };
}

const tool = (name: string, loop = '') => `
  - name: ${name}
    effect: read_only
    skip_memoize: true
    input_schema: '{"type":"object"}'
    http: { url: "${tools.url}/same" }${loop ? `\n    loop: ${loop}` : ''}`;

test('limits.loop_window below the default stop_threshold is warned of, and it does leave a loop unstopped', async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp(`tools:${tool('konst')}\nlimits: { loop_window: 5 }\n`, { logger });
  try {
    expect(warnings).toEqual([
      "limits.loop_window 5 is smaller than the default loop stop_threshold 10: a session's window never holds that many repeats of a call, so a repeated call of a tool without its own threshold is never stopped (LOOP_DETECTED); make loop_window at least 10",
    ]);
    // What it warns of: 12 identical results, none stopped (the window holds 5 of them).
    for (let i = 1; i <= 12; i++) await d.dispatch.dispatch({ sessionId: 's', calls: [{ id: `c${i}`, name: 'konst', arguments: '{}' }] });
    expect(tools.count('/same')).toBe(12);
  } finally {
    await d.close();
  }
});

test('a window smaller than every default names each threshold it turns off', async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp(`tools:${tool('konst')}\nlimits: { loop_window: 1 }\n`, { logger });
  try {
    expect(warnings).toEqual([
      "limits.loop_window 1 is smaller than the default loop warn_threshold 3, stop_threshold 10, failure_warn_threshold 2, failure_block_threshold 5: a session's window never holds that many repeats of a call, so a repeated call of a tool without its own threshold is never warned of (LOOP_WARNING), stopped (LOOP_DETECTED), warned of failing the same way or refused (LOOP_BLOCKED); make loop_window at least 10",
    ]);
  } finally {
    await d.close();
  }
});

test("a tool's own thresholds above the window, or a warning threshold above its stop, are warned of", async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp(
    `tools:${tool('wide', '{ warn_threshold: 150, stop_threshold: 150 }')}${tool('inv', '{ warn_threshold: 5, stop_threshold: 2 }')}${tool('short', '{ stop_threshold: 2 }')}${tool('fails', '{ failure_warn_threshold: 6, failure_block_threshold: 200 }')}${tool('fine', '{ warn_threshold: 4, stop_threshold: 4, failure_warn_threshold: 5, failure_block_threshold: 100 }')}${tool('plain')}\n`,
    { logger },
  );
  try {
    expect(warnings).toEqual([
      'tool "wide": loop.warn_threshold 150 is larger than limits.loop_window 100: a session\'s window never holds that many repeats of a call, so a repeated call of it is never warned of (LOOP_WARNING)',
      'tool "wide": loop.stop_threshold 150 is larger than limits.loop_window 100: a session\'s window never holds that many repeats of a call, so a repeated call of it is never stopped (LOOP_DETECTED)',
      'tool "inv": loop.warn_threshold 5 is larger than its stop_threshold 2: a repeated call is stopped (LOOP_DETECTED) before it is ever warned of; make warn_threshold at most stop_threshold',
      'tool "short": loop.warn_threshold 3 (the default) is larger than its stop_threshold 2: a repeated call is stopped (LOOP_DETECTED) before it is ever warned of; make warn_threshold at most stop_threshold',
      'tool "fails": loop.failure_block_threshold 200 is larger than limits.loop_window 100: a session\'s window never holds that many repeats of a call, so a repeated call of it is never refused (LOOP_BLOCKED)',
    ]);
    // "inv" is stopped at the 3rd identical call, never warned before.
    const results = [];
    for (let i = 1; i <= 3; i++) {
      results.push(await d.dispatch.dispatch({ sessionId: 'inv', calls: [{ id: `c${i}`, name: 'inv', arguments: '{}' }] }).then((r) => r.results[0]!.warnings.length, (e: { code: number }) => e.code));
    }
    expect(results).toEqual([0, 0, status.ABORTED]);
  } finally {
    await d.close();
  }
});

test('the default settings get no loop warning', async () => {
  const { logger, warnings } = warningsLogger();
  const d = await startApp(`tools:${tool('konst')}\nlimits: { loop_window: 10 }\n`, { logger });
  try {
    expect(warnings).toEqual([]);
  } finally {
    await d.close();
  }
});
