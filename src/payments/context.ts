import type { AppContext } from '../context.js';
import { openPaymentRail, type PaymentRail } from './rail.js';

const opening = new WeakMap<AppContext, Promise<PaymentRail>>();

/** The payment rail; opened on first use in processes that did not open it at start (CLI commands). */
export function paymentRail(ctx: AppContext): Promise<PaymentRail> {
  if (ctx.payments) return Promise.resolve(ctx.payments);
  let pending = opening.get(ctx);
  if (!pending) {
    pending = openPaymentRail(ctx.config.payments, {
      database: ctx.database,
      appSecret: ctx.appSecret,
      baseClient: ctx.chainClient,
    }).then((rail) => {
      ctx.payments = rail;
      ctx.chainClient ??= rail.devnet?.publicClient;
      return rail;
    });
    opening.set(ctx, pending);
  }
  return pending;
}
