// What the chart's alert expressions may name, read from docs/metrics.md's table of series, and a
// reading of the few PromQL forms the chart writes (no Prometheus here to parse them): the metric
// names an expression selects, the functions it calls, the labels it groups and matches by.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './render-chart';

/** Labels Prometheus or the Kubernetes service discovery (the ServiceMonitor) put on every scraped series. */
export const TARGET_LABELS = ['instance', 'job', 'namespace', 'pod', 'service', 'container', 'endpoint'];

/** The functions and aggregations the chart's expressions may use. */
export const FUNCTIONS = ['rate', 'increase', 'sum', 'max'];

/** Every series of docs/metrics.md's `## Series` table, by name, with the labels its row lists. */
export function documentedSeries(): Map<string, string[]> {
  const docs = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');
  const table = docs.slice(docs.indexOf('\n## Series\n'), docs.indexOf('\n## ', docs.indexOf('\n## Series\n') + 1));
  const series = new Map<string, string[]>();
  for (const [, name, labels] of table.matchAll(/^\| `([a-z_:]+)` \| [^|]+ \| ([^|]+) \|/gm)) {
    series.set(name!, labels!.trim() === 'none' ? [] : [...labels!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
  }
  return series;
}

/** What an expression names. */
export interface ExpressionParts {
  readonly metrics: string[];
  readonly functions: string[];
  /** Labels of every `by (...)` clause. */
  readonly groupedBy: string[][];
  /** Label names of every `{...}` matcher. */
  readonly matched: string[];
  /** Range durations (`[5m]`). */
  readonly ranges: string[];
  /** Problems with the form itself: unbalanced brackets, a matcher or a comparison that is not PromQL. */
  readonly syntax: string[];
}

const BRACKETS: Record<string, string> = { ')': '(', '}': '{', ']': '[' };

/** The parts of an expression of the chart's forms, and what in it is not PromQL. */
export function partsOf(expr: string): ExpressionParts {
  const syntax: string[] = [];
  if (expr.includes('{{') || expr.includes('}}')) syntax.push('a template action left in the expression');
  const open: string[] = [];
  for (const c of expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
    if ('({['.includes(c)) open.push(c);
    else if (c in BRACKETS && open.pop() !== BRACKETS[c]) syntax.push(`unbalanced ${c}`);
  }
  if (open.length) syntax.push(`unclosed ${open.join('')}`);
  const matched: string[] = [];
  for (const [, body] of expr.matchAll(/\{([^}]*)\}/g)) {
    for (const matcher of body!.split(/,\s*/).filter(Boolean)) {
      const m = /^([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"(?:[^"\\]|\\.)*"$/.exec(matcher.trim());
      if (m) matched.push(m[1]!);
      else syntax.push(`not a label matcher: ${matcher}`);
    }
  }
  const ranges = [...expr.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!);
  for (const range of ranges) if (!/^([0-9]+(ms|s|m|h|d|w|y))+$/.test(range)) syntax.push(`not a duration: [${range}]`);
  const groupedBy = [...expr.matchAll(/\bby \(([^)]*)\)/g)].map((m) => m[1]!.split(/,\s*/));
  if (!/ (==|!=|>|<|>=|<=) -?[0-9.]+(e-?[0-9]+)?$/.test(expr)) syntax.push('does not end in a comparison with a number');
  // What is left once strings, matchers, ranges and grouping are gone: names followed by "(" call, the rest select.
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '').replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '').replace(/\bby \([^)]*\)/g, '');
  const functions: string[] = [];
  const metrics: string[] = [];
  for (const m of bare.matchAll(/(?<![a-zA-Z0-9_:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) (m[2] ? functions : metrics).push(m[1]!);
  return { metrics, functions, groupedBy, matched, ranges, syntax };
}

/** Label names an alert's annotations take from `$labels`. */
export const annotationLabels = (annotations: Record<string, string>) =>
  Object.values(annotations).flatMap((text) => [...text.matchAll(/\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)/g)].map((m) => m[1]!));
