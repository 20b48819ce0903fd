import type { App, AppContext } from '../context.js';
import { creatorOf, requireApiKey } from '../identity/guard.js';
import { ListingIdParamsSchema } from '../listings/schemas.js';
import type { ErrorCode } from '../platform/errors.js';
import { routeOptions } from '../platform/http/route-options.js';
import { errorResponses } from '../platform/http/schemas.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import { creatorLedger, listingHolders, listPayouts, listSales, salesPerDay } from './sales.js';
import {
  CreatorPageQuerySchema,
  DailySalesQuerySchema,
  DailySalesSchema,
  LedgerSchema,
  ListingHoldersSchema,
  PayoutsPageSchema,
  SalesPageSchema,
  SalesQuerySchema,
} from './schemas.js';

/**
 * The creator's reads of its money, under `/api/creators/me/…` (the web app's sales and payout
 * pages call them too): each has the creator rate limit and the `sales:read` key guard.
 */
export function earningsRoutes(ctx: AppContext) {
  return async (app: App): Promise<void> => {
    const route = routeOptions(ctx.config, { rateLimit: 'creator', tag: 'creator' });
    // A creator's money is theirs alone: no answer, error or not, may be kept by a cache.
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    const read = requireApiKey(ctx, 'sales:read');
    /** The route's own error codes, with those of every key route. */
    const errors = (...codes: ErrorCode[]) =>
      errorResponses('invalid_request', 'invalid_key', 'insufficient_scope', ...codes, 'rate_limited');
    const integerOf = (value: string | undefined) => (value === undefined ? undefined : Number(value));
    const at = (date: Date | null) => date?.toISOString() ?? null;

    app.get(
      '/creators/me/sales',
      route({
        guard: read,
        summary: "Paid purchases of the caller's listings, newest first; free grants are not sales",
        querystring: SalesQuerySchema,
        response: { 200: SalesPageSchema, ...errors('not_found') },
      }),
      async (request) => {
        const page = await listSales(ctx, creatorOf(request).id, {
          cursor: request.query.cursor,
          limit: integerOf(request.query.limit),
          listingId: request.query.listing_id,
        });
        return {
          sales: page.sales.map((sale) => ({
            id: sale.id,
            listing: sale.listing,
            buyer: sale.wallet,
            version: sale.version,
            kind: sale.kind,
            from_version: sale.fromVersion,
            amount_micro: formatMicroUsdc(sale.amountMicro),
            fee_micro: formatMicroUsdc(sale.feeMicro),
            net_micro: formatMicroUsdc(sale.netMicro),
            transaction: sale.transaction,
            transaction_url: sale.transactionUrl,
            source: sale.source,
            created_at: sale.createdAt.toISOString(),
          })),
          next_cursor: page.nextCursor,
        };
      },
    );

    app.get(
      '/creators/me/sales/daily',
      route({
        guard: read,
        summary: "The caller's sales per UTC day, zero days included, oldest first, ending today",
        querystring: DailySalesQuerySchema,
        response: { 200: DailySalesSchema, ...errors() },
      }),
      async (request) => {
        const days = await salesPerDay(ctx, creatorOf(request).id, integerOf(request.query.days));
        return {
          days: days.map((day) => ({
            date: day.date,
            sales: day.sales,
            amount_micro: formatMicroUsdc(day.amountMicro),
            net_micro: formatMicroUsdc(day.netMicro),
          })),
        };
      },
    );

    app.get(
      '/creators/me/ledger',
      route({
        guard: read,
        summary: "The caller's balance (credits − sweeps + reversals) and ledger entries, newest first",
        querystring: CreatorPageQuerySchema,
        response: { 200: LedgerSchema, ...errors() },
      }),
      async (request) => {
        const ledger = await creatorLedger(ctx.database.db, creatorOf(request).id, {
          cursor: request.query.cursor,
          limit: integerOf(request.query.limit),
        });
        return {
          balance_micro: formatMicroUsdc(ledger.balanceMicro),
          credited_micro: formatMicroUsdc(ledger.creditedMicro),
          swept_micro: formatMicroUsdc(ledger.sweptMicro),
          entries: ledger.entries.map((entry) => ({
            id: entry.id,
            kind: entry.kind,
            amount_micro: formatMicroUsdc(entry.amountMicro),
            fee_micro: formatMicroUsdc(entry.feeMicro),
            purchase_id: entry.purchaseId,
            sweep_id: entry.sweepId,
            created_at: entry.createdAt.toISOString(),
          })),
          next_cursor: ledger.nextCursor,
        };
      },
    );

    app.get(
      '/creators/me/payouts',
      route({
        guard: read,
        summary: "The caller's payouts, newest first",
        querystring: CreatorPageQuerySchema,
        response: { 200: PayoutsPageSchema, ...errors() },
      }),
      async (request) => {
        const page = await listPayouts(ctx, creatorOf(request).id, {
          cursor: request.query.cursor,
          limit: integerOf(request.query.limit),
        });
        return {
          payouts: page.payouts.map((payout) => ({
            id: payout.id,
            address: payout.address,
            amount_micro: formatMicroUsdc(payout.amountMicro),
            state: payout.state,
            transaction: payout.transaction,
            transaction_url: payout.transactionUrl,
            error: payout.error,
            created_at: payout.createdAt.toISOString(),
            finished_at: at(payout.finishedAt),
          })),
          next_cursor: page.nextCursor,
        };
      },
    );

    app.get(
      '/listings/:id/holders',
      route({
        guard: read,
        summary:
          "How many wallets hold a version of the caller's listing, and how many of them receive every later version free (bought while updates were included)",
        params: ListingIdParamsSchema,
        response: { 200: ListingHoldersSchema, ...errors('not_found') },
      }),
      async (request) => {
        const counts = await listingHolders(ctx, creatorOf(request).id, request.params.id);
        return {
          listing_id: counts.listingId,
          holders: counts.holders,
          updates_included: counts.updatesIncluded,
        };
      },
    );
  };
}
