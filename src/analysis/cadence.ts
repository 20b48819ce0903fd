export interface Cadence {
  releases: number;
  median_days_between_releases: number | null;
  on_time_fraction: number | null;
  days_since_last: number;
  score: number | null;
  finished: boolean;
}

const DAY = 86_400_000;
/** A gap counts as on time when it is at most this multiple of the median gap. */
const ON_TIME_FACTOR = 1.5;
const FINISHED =
  /^\s*(?:[-*>]\s*)?\**(?:project\s+)?status\**\s*[:\-–]\s*\**(finished|complete|completed|feature[- ]complete|done)\b/im;

const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places;
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Release rhythm from the listing's release dates (this one included). Formulas in docs/ANALYSIS.md.
 * `finished` is the repository's own word: a "Status: finished/complete" line in its README.
 */
export function analyseCadence(releaseDates: Date[], now: Date, readme: string | undefined): Cadence {
  const times = releaseDates.map((d) => d.getTime()).sort((a, b) => a - b);
  const gaps = times.slice(1).map((t, i) => (t - times[i]!) / DAY);
  const medianGap = gaps.length > 0 ? median(gaps) : null;
  const onTime =
    gaps.length >= 2 && medianGap !== null
      ? gaps.filter((g) => g <= Math.max(medianGap, 1) * ON_TIME_FACTOR).length / gaps.length
      : null;
  // Regularity: 1 minus the median absolute deviation of the gaps relative to their median.
  const regularity =
    gaps.length >= 2 && medianGap !== null && medianGap > 0
      ? 1 - Math.min(1, median(gaps.map((g) => Math.abs(g - medianGap))) / medianGap)
      : null;
  const last = times.at(-1) ?? now.getTime();
  return {
    releases: times.length,
    median_days_between_releases: medianGap === null ? null : round(medianGap, 1),
    on_time_fraction: onTime === null ? null : round(onTime, 2),
    days_since_last: Math.max(0, Math.floor((now.getTime() - last) / DAY)),
    score: onTime === null || regularity === null ? null : round(0.5 * onTime + 0.5 * regularity, 2),
    finished: readme !== undefined && FINISHED.test(readme),
  };
}

export function cadenceSentence(c: Cadence): string {
  const finished = c.finished ? ' The author marks it finished: no further releases are planned.' : '';
  if (c.releases === 1) return `First release.${finished}`;
  const gap = c.median_days_between_releases!;
  const rhythm = `${c.releases} releases, a median of ${gap} ${gap === 1 ? 'day' : 'days'} apart`;
  // "On time" is a gap at most ON_TIME_FACTOR times the median: said as such, not as a bare percentage.
  const share = c.on_time_fraction === null ? null : Math.round(c.on_time_fraction * 100);
  const onTime =
    share === null
      ? ''
      : share === 100
        ? `; each came within ${ON_TIME_FACTOR} times the usual gap`
        : `; ${share}% of them came within ${ON_TIME_FACTOR} times the usual gap`;
  return `${rhythm}${onTime}.${finished}`;
}
