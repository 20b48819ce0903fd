import type { AppContext } from '../context.js';
import { openPaymentRail, type PaymentRail } from './rail.js';

/**
 * The payment rail, opened on first use: the one place it is opened and the context updated.
 * `createContext()` calls it at start for processes that serve or run jobs; one-off CLI commands
 * that never pay open nothing (on devnet, opening replays the chain's journal).
 */
export function paymentRail(ctx: AppContext): Promise<PaymentRail> {
  ctx.payments ??= openPaymentRail(ctx.config.payments, {
    database: ctx.database,
    appSecret: ctx.appSecret,
    baseClient: ctx.chainClient,
  }).then((rail) => {
    // On devnet, smart-wallet signatures verify against the devnet chain.
    if (rail.devnet) ctx.chainClient = rail.devnet.publicClient;
    return rail;
  });
  return ctx.payments;
}
