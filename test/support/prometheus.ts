/**
 * A strict reader of Prometheus' text exposition format (version 0.0.4): it throws on anything Prometheus
 * would refuse (a sample without its family's TYPE, a family split in two, a bad name, label or value, a
 * histogram whose buckets are not cumulative or whose +Inf bucket is not its count). The npm parsers we
 * tried drop the labels of histograms.
 */

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`Bad labels in: ${line}`);
    if (match[1]! in labels) throw new Error(`Label ${match[1]} twice in: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  // As Go's ParseFloat, which Prometheus uses: NaN and Inf in any case.
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`Bad value in: ${line}`);
  return value;
}

function familyOf(sampleName: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const direct = families.get(sampleName);
  if (direct) return direct;
  const base = sampleName.replace(/_(bucket|sum|count|total)$/, '');
  const family = families.get(base);
  if (family?.type === 'counter') return sampleName === `${base}_total` ? family : undefined;
  return family && (family.type === 'histogram' || family.type === 'summary') ? family : undefined;
}

export function parsePrometheus(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const closed = new Set<string>();
  let current: MetricFamily | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) continue; // a comment
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`Bad metric name: ${line}`);
      let family = families.get(name);
      if (!family) {
        if (closed.has(name)) throw new Error(`Family ${name} appears twice`);
        if (current) closed.add(current.name);
        family = { name, help: '', type: 'untyped', samples: [] };
        families.set(name, family);
        current = family;
      } else if (family !== current) throw new Error(`Family ${name} is split: ${line}`);
      if (kind === 'HELP') family.help = rest;
      else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
          throw new Error(`Bad type: ${line}`);
        if (family.samples.length > 0) throw new Error(`TYPE after samples: ${line}`);
        family.type = rest as MetricFamily['type'];
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`Bad sample line: ${line}`);
    const family = familyOf(match[1]!, families);
    if (!family) throw new Error(`Sample without a TYPE: ${line}`);
    if (family !== current) throw new Error(`Sample outside its family's block: ${line}`);
    family.samples.push({
      name: match[1]!,
      labels: match[3] ? parseLabels(match[3], line) : {},
      value: parseValue(match[4]!, line),
    });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, le), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
  }
  for (const [key, { buckets, count }] of series) {
    buckets.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < buckets.length; i++)
      if (buckets[i]![1] < buckets[i - 1]![1])
        throw new Error(`${family.name} ${key}: buckets not cumulative`);
    const inf = buckets.at(-1);
    if (!inf || inf[0] !== Infinity || inf[1] !== count)
      throw new Error(`${family.name} ${key}: the +Inf bucket is not the count`);
  }
}

/**
 * The value of the counter or gauge series (a histogram's count) whose labels include `labels`, summed
 * over the series that match; 0 when none does.
 */
export function sampleOf(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = families.get(name);
  if (!family) return 0;
  const wanted = family.type === 'histogram' ? `${name}_count` : name;
  let total = 0;
  for (const sample of family.samples) {
    if (sample.name !== wanted) continue;
    if (!Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) continue;
    total += sample.value;
  }
  return total;
}
