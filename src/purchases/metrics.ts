import type { AppContext } from '../context.js';
import { sharedWhileRunning } from '../platform/concurrency.js';
import { settlementBacklog } from './store.js';

/** The settlement backlog as gauges read when scraped: what an operator alerts on when the chain or facilitator stalls. */
export function observeSettlementBacklog(ctx: Pick<AppContext, 'metrics' | 'database' | 'clock'>): void {
  // One scrape collects both gauges at once: they share one query.
  const backlog = sharedWhileRunning(() => settlementBacklog(ctx.database.db));
  ctx.metrics.readGauge(
    'repo402_payments_awaiting_settlement',
    'Payments taken whose settlement is not decided yet (state settling)',
    [],
    async () => [{ value: (await backlog()).count }],
  );
  ctx.metrics.readGauge(
    'repo402_payment_oldest_awaiting_settlement_seconds',
    'Age of the oldest payment awaiting settlement; 0 when none waits',
    [],
    async () => {
      const { oldest } = await backlog();
      const age = oldest ? Math.max(0, (ctx.clock.now().getTime() - oldest.getTime()) / 1000) : 0;
      return [{ value: age }];
    },
  );
}
