import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { TestApp } from './app.js';

export interface Responsiveness {
  /** Longest event-loop delay seen (monitorEventLoopDelay, 10 ms resolution), and its 99th percentile. */
  maxDelayMs: number;
  p99DelayMs: number;
  /** Time each /api/health answer took, and the statuses seen. */
  healthMs: number[];
  statuses: number[];
  summary: string;
}

/**
 * Watches the service while something heavy runs: samples the event loop's delay and asks
 * /api/health every 100 ms. `stop()` ends both and reports; call it in `afterEach` too, so a failed
 * test never leaves requests running against a closed app.
 */
export function watchResponsiveness(t: TestApp): { stop(): Promise<Responsiveness> } {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const healthMs: number[] = [];
  const statuses = new Set<number>();
  let watching = true;
  const polling = (async () => {
    while (watching) {
      const started = performance.now();
      const res = await t.app.inject({ url: '/api/health' });
      healthMs.push(performance.now() - started);
      statuses.add(res.statusCode);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  let report: Responsiveness | undefined;
  return {
    async stop() {
      if (report) return report;
      watching = false;
      await polling;
      delay.disable();
      const maxDelayMs = delay.max / 1e6;
      const p99DelayMs = delay.percentile(99) / 1e6;
      const slowest = Math.max(0, ...healthMs);
      report = {
        maxDelayMs,
        p99DelayMs,
        healthMs,
        statuses: [...statuses],
        summary: `event-loop delay max ${maxDelayMs.toFixed(0)} ms, p99 ${p99DelayMs.toFixed(0)} ms; ${healthMs.length} health answers, slowest ${slowest.toFixed(0)} ms`,
      };
      return report;
    },
  };
}
