import type { ToolRates, ToolStats } from '../../gen/dispatch/v1/registry_pb';
import { terminalText, terminalWord } from '../events/terminal-text';

/** The six rates in the order the second seed lists them, then the error rate, with their short names. */
const RATES: readonly (readonly [keyof Omit<ToolRates, '$typeName' | '$unknown'>, string])[] = [
  ['validationFailure', 'validation'],
  ['timeout', 'timeout'],
  ['retry', 'retry'],
  ['idempotentHit', 'idempotent'],
  ['resultBounding', 'bounding'],
  ['unexpectedException', 'unexpected'],
  ['error', 'errors'],
];

const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

/** A window's length in the largest unit that divides it (the longest is a day): 86400 -> `24 h`, 5400 -> `90 min`, 45 -> `45 s`. */
export function spanText(seconds: number): string {
  for (const [unit, size] of [['h', 3_600], ['min', 60]] as const) {
    if (seconds % size === 0) return `${seconds / size} ${unit}`;
  }
  return `${seconds} s`;
}

/** The window the rates cover, as a line's prefix (`last 15 min, 4 calls: `); none from a server that predates the window. */
function windowPrefix(stats: ToolStats): string {
  const seconds = stats.windowSeconds;
  if (!seconds) return '';
  return `last ${spanText(seconds)}, ${stats.windowCalls} call${stats.windowCalls === 1n ? '' : 's'}: `;
}

/** The rates line: the window and its rates, or that it holds no call (0.0% would read as measured). */
function ratesLine(stats: ToolStats, rates: ToolRates): string {
  if (stats.windowSeconds && stats.windowCalls === 0n) return `  no calls in the last ${spanText(stats.windowSeconds)}`;
  // A server that predates the error rate sends no threshold for it: its 0% would read as measured.
  const shown = stats.alertThresholds?.error ? RATES : RATES.filter(([field]) => field !== 'error');
  return `  ${windowPrefix(stats)}${shown.map(([field, name]) => `${name} ${percent(rates[field])}`).join('  ')}`;
}

/** A tool's GetToolStats as readable lines: calls (all time), breaker and health; the six rates and the error rate over the recent window; one line per alert. Names and alerts are shown escaped (a tenant names its tools). */
export function formatStats(stats: ToolStats): string {
  const calls = `${String(stats.calls).padStart(8)} call${stats.calls === 1n ? ' ' : 's'}`;
  const lines = [`${terminalWord(stats.tool).padEnd(24)} ${calls}  breaker ${terminalWord(stats.breakerState || 'closed')}  health ${stats.healthScore.toFixed(2)}`];
  if (stats.rates) lines.push(ratesLine(stats, stats.rates));
  for (const alert of stats.alerts) lines.push(`  ALERT ${terminalText(alert)}`);
  // A tool failing every call with 5xx shows in the error rate, and its breaker says it too.
  if (stats.breakerState === 'open') lines.push('  ALERT breaker open: calls are refused without reaching the tool');
  return lines.join('\n');
}
