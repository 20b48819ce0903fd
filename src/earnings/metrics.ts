import type { AppContext } from '../context.js';
import { openUnattributedSales } from '../purchases/chain-sales.js';
import { openTransfersOut } from './store.js';

/**
 * What the reconciliation against the chain left for the operator, as gauges read when scraped:
 * any transfer out unresolved holds every payout, so it is worth an alert.
 */
export function observeChainExceptions(ctx: Pick<AppContext, 'metrics' | 'database'>): void {
  ctx.metrics.readGauge(
    'repo402_transfers_out_unresolved',
    'Transfers out of the platform address the database could not attribute; while above 0 the payout sweep sends nothing',
    [],
    async () => [{ value: (await openTransfersOut(ctx.database.db)).length }],
  );
  ctx.metrics.readGauge(
    'repo402_sales_unattributed',
    'Sales found on chain that no listing could be attributed, awaiting the operator (repo402 sales unattributed)',
    [],
    async () => [{ value: (await openUnattributedSales(ctx.database.db)).length }],
  );
}
