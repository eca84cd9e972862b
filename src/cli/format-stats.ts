import type { ToolRates, ToolStats } from '../../gen/dispatch/v1/registry_pb';
import { terminalText, terminalWord } from '../events';

/** The six rates in the order the second seed lists them, with their short names. */
const RATES: readonly (readonly [keyof Omit<ToolRates, '$typeName' | '$unknown'>, string])[] = [
  ['validationFailure', 'validation'],
  ['timeout', 'timeout'],
  ['retry', 'retry'],
  ['idempotentHit', 'idempotent'],
  ['resultBounding', 'bounding'],
  ['unexpectedException', 'unexpected'],
];

const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

/** The window the rates cover, as a line's prefix (`last 15 min, 4 calls: `); none from a server that predates the window. */
function windowPrefix(stats: ToolStats): string {
  const seconds = stats.windowSeconds;
  if (!seconds) return '';
  const span = seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
  return `last ${span}, ${stats.windowCalls} call${stats.windowCalls === 1n ? '' : 's'}: `;
}

/** A tool's GetToolStats as readable lines: calls (all time), breaker and health; the six rates over the recent window; one line per alert. Names and alerts are shown escaped (a tenant names its tools). */
export function formatStats(stats: ToolStats): string {
  const lines = [`${terminalWord(stats.tool).padEnd(24)} ${String(stats.calls).padStart(8)} calls  breaker ${terminalWord(stats.breakerState || 'closed')}  health ${stats.healthScore.toFixed(2)}`];
  if (stats.rates) lines.push(`  ${windowPrefix(stats)}${RATES.map(([field, name]) => `${name} ${percent(stats.rates![field])}`).join('  ')}`);
  for (const alert of stats.alerts) lines.push(`  ALERT ${terminalText(alert)}`);
  return lines.join('\n');
}
