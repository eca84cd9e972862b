/** One sample of the Prometheus text exposition format. */
export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples and declared types of a scrape, parsed per the text format (0.0.4). */
export interface Scrape {
  readonly samples: Sample[];
  readonly types: Record<string, string>;
  /** The value of the one sample named `name` whose labels include `labels`; undefined if none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/gy;
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  if (re.lastIndex !== 0 && re.lastIndex < text.length) throw new Error(`bad labels: ${text}`);
  return labels;
}

/** Parses a scrape body; throws on a line that is neither a comment nor a sample. */
export function parsePrometheus(body: string): Scrape {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  for (const line of body.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types[type[1]!] = type[2]!;
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    samples.push({ name: match[1]!, labels: parseLabels(match[2] ?? ''), value: Number(match[3] === '+Inf' ? Infinity : match[3]) });
  }
  return {
    samples,
    types,
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}
