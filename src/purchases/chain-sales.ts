import type { AppContext } from '../context.js';
import { logEvent } from '../platform/events.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type { ChainSale } from '../x402/chain-transfers.js';
import type { PaymentRail } from '../x402/rail.js';
import { recordSettlement } from './settlement.js';
import { chainSaleCandidates, findPayment, insertPayment } from './store.js';

export type ChainSaleOutcome =
  | { outcome: 'known' }
  | { outcome: 'recovered'; purchaseId: string; listingId: string; version: string }
  | { outcome: 'unattributed'; reason: string };

/**
 * After a restore from an older backup, a transfer on chain may be all that is left of a purchase
 * settled since. Records `sale` unless the database has it: the payment row it names is settled from the chain
 * (as the reconciler would), or, with no row at all, a row is written for the one listing and
 * version it can have bought and settled at once: purchase, entitlement and the creator's credit,
 * in the one statement every settlement uses. A sale that matches no listing, or several, is
 * never guessed: it is logged (`chain.sale_unattributed`) for an operator, and counted.
 */
export async function recordChainSale(
  ctx: AppContext,
  rail: PaymentRail,
  sale: ChainSale,
): Promise<ChainSaleOutcome> {
  const db = ctx.database.db;
  const payer = sale.payer.toLowerCase();
  const existing = await findPayment(db, rail.asset.toLowerCase(), payer, sale.nonce);
  if (existing?.state === 'settled') return { outcome: 'known' };
  if (existing) {
    const purchase = await recordSettlement(ctx, existing, sale.transaction);
    return {
      outcome: 'recovered',
      purchaseId: purchase.id,
      listingId: existing.listingId,
      version: existing.version,
    };
  }
  const candidates = await chainSaleCandidates(ctx.database, payer, sale.amountMicro, sale.at);
  if (candidates.length !== 1) {
    return unattributed(
      ctx,
      sale,
      candidates.length === 0 ? 'no listing on sale at that price' : 'several listings match',
    );
  }
  const [candidate] = candidates as [(typeof candidates)[number]];
  const now = ctx.clock.now();
  const row = await insertPayment(ctx.database, {
    asset: rail.asset.toLowerCase(),
    payer,
    nonce: sale.nonce,
    network: rail.network.caip2,
    payTo: rail.payTo.toLowerCase(),
    amountMicro: sale.amountMicro,
    listingId: candidate.listingId,
    creatorId: candidate.creatorId,
    version: candidate.version,
    kind: candidate.kind,
    fromVersion: candidate.fromVersion,
    updatePriceMicro: BigInt(candidate.updatePriceMicro),
    // The channel a sale came through is not on chain.
    source: 'http',
    payload: {
      x402Version: 2,
      recovered_from_chain: { transaction: sale.transaction, at: sale.at.toISOString() },
      payload: {
        authorization: {
          from: sale.payer,
          to: rail.payTo,
          value: sale.amountMicro.toString(),
          validAfter: sale.validAfter.toString(),
          validBefore: sale.validBefore.toString(),
          nonce: sale.nonce,
        },
      },
    },
    requirements: {
      scheme: 'exact',
      network: rail.network.caip2,
      asset: rail.asset,
      amount: sale.amountMicro.toString(),
      payTo: rail.payTo,
    },
    validBefore: new Date(Number(sale.validBefore) * 1000),
    state: 'settling',
    leaseUntil: now,
    attempts: 0,
    createdAt: sale.at,
    updatedAt: now,
  });
  if (!row) {
    // Written meanwhile by another process, or the buyer's slot for that version is taken.
    const again = await findPayment(db, rail.asset.toLowerCase(), payer, sale.nonce);
    if (again?.state === 'settled') return { outcome: 'known' };
    return unattributed(ctx, sale, 'the buyer has another payment for that version');
  }
  const purchase = await recordSettlement(ctx, row, sale.transaction);
  return { outcome: 'recovered', purchaseId: purchase.id, listingId: row.listingId, version: row.version };
}

function unattributed(ctx: AppContext, sale: ChainSale, reason: string): ChainSaleOutcome {
  logEvent(ctx.log, 'chain.sale_unattributed', {
    transaction: sale.transaction,
    payer: sale.payer,
    amount_micro: formatMicroUsdc(sale.amountMicro),
    at: sale.at.toISOString(),
    reason,
  });
  return { outcome: 'unattributed', reason };
}
