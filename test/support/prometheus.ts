import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/**
 * A scrape, parsed by a Prometheus text-format parser: one value per family and label set. The
 * parser merges a labelled histogram's series into one, so a histogram's count per label set is
 * read from its `_count` sample line instead.
 */
export class Scrape {
  private readonly families: ReturnType<typeof parsePrometheusTextFormat>;

  constructor(readonly text: string) {
    this.families = parsePrometheusTextFormat(text);
  }

  has(name: string): boolean {
    return this.families.some((family) => family.name === name);
  }

  /** A counter's or gauge's sample of `name` whose labels include `labels`; 0 when absent. */
  value(name: string, labels: Record<string, string> = {}): number {
    const family = this.families.find((candidate) => candidate.name === name);
    if (family?.type === 'HISTOGRAM') throw new Error(`${name} is a histogram: read observations()`);
    const sample = family?.metrics.find((metric) =>
      Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value),
    );
    return sample ? Number(sample.value) : 0;
  }

  /** How many observations histogram `name` holds for the label set `labels` (all of its labels). */
  observations(name: string, labels: Record<string, string>): number {
    const wanted = Object.entries(labels)
      .map(([key, value]) => `${key}="${value}"`)
      .sort()
      .join(',');
    for (const line of this.text.split('\n')) {
      const match = /^(\w+)_count\{(.*)\} (\S+)$/.exec(line);
      if (match?.[1] === name && match[2]!.split(',').sort().join(',') === wanted) return Number(match[3]);
    }
    return 0;
  }
}
