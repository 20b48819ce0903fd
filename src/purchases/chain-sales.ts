import type { Address, Hex } from 'viem';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { findPublicListing } from '../listings/public-listings.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type { ChainSale } from '../x402/chain-transfers.js';
import type { PaymentRail } from '../x402/rail.js';
import { recordSettlement } from './settlement.js';
import {
  type ChainSaleCandidate,
  chainSaleCandidates,
  findPayment,
  findUnattributedSale,
  grantTarget,
  insertPayment,
  insertUnattributedSale,
  openUnattributedSaleRows,
  type PaymentRow,
  resolveUnattributedSale,
  type UnattributedSaleRow,
} from './store.js';

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
 * never guessed: it is kept in `unattributed_sales` and logged (`chain.sale_unattributed`) for an
 * operator, who grants it (`grantUnattributedSale`) or records its refund.
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
  const kept = await findUnattributedSale(db, sale.transaction.toLowerCase());
  if (kept) return kept.resolution ? { outcome: 'known' } : { outcome: 'unattributed', reason: kept.reason };
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
  const row = await insertChainPayment(ctx, rail, sale, candidate);
  if (!row) {
    // Written meanwhile by another process, or the buyer's slot for that version is taken.
    const again = await findPayment(db, rail.asset.toLowerCase(), payer, sale.nonce);
    if (again?.state === 'settled') return { outcome: 'known' };
    return unattributed(ctx, sale, 'the buyer has another payment for that version');
  }
  const purchase = await recordSettlement(ctx, row, sale.transaction);
  return { outcome: 'recovered', purchaseId: purchase.id, listingId: row.listingId, version: row.version };
}

/** The payment row a sale on chain would have had, claimed for its settlement from the chain. */
function insertChainPayment(
  ctx: AppContext,
  rail: PaymentRail,
  sale: ChainSale,
  candidate: ChainSaleCandidate,
): Promise<PaymentRow | undefined> {
  const now = ctx.clock.now();
  return insertPayment(ctx.database, {
    asset: rail.asset.toLowerCase(),
    payer: sale.payer.toLowerCase(),
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
}

async function unattributed(ctx: AppContext, sale: ChainSale, reason: string): Promise<ChainSaleOutcome> {
  const kept = await insertUnattributedSale(ctx.database.db, {
    transaction: sale.transaction.toLowerCase(),
    payer: sale.payer.toLowerCase(),
    nonce: sale.nonce,
    amountMicro: sale.amountMicro,
    validAfter: new Date(Number(sale.validAfter) * 1000),
    validBefore: new Date(Number(sale.validBefore) * 1000),
    at: sale.at,
    reason,
    foundAt: ctx.clock.now(),
  });
  // Found before (by another process, or an earlier run): logged once.
  if (!kept) return { outcome: 'unattributed', reason };
  logEvent(ctx.log, 'chain.sale_unattributed', {
    transaction: sale.transaction,
    payer: sale.payer,
    amount_micro: formatMicroUsdc(sale.amountMicro),
    at: sale.at.toISOString(),
    reason,
  });
  return { outcome: 'unattributed', reason };
}

/** The sales the reconciliation could not attribute that no operator has resolved yet, oldest first. */
export function openUnattributedSales(db: Db): Promise<UnattributedSaleRow[]> {
  return openUnattributedSaleRows(db);
}

async function openSale(ctx: AppContext, transaction: string): Promise<UnattributedSaleRow> {
  const row = await findUnattributedSale(ctx.database.db, transaction.toLowerCase());
  if (!row)
    throw new AppError('not_found', { message: `no unattributed sale has transaction ${transaction}` });
  if (row.resolution) {
    throw AppError.invalid(
      [{ field: 'transaction', reason: `already resolved (${row.resolution})` }],
      `the sale in ${transaction} was already resolved: ${row.resolution}`,
    );
  }
  return row;
}

/**
 * The operator's answer to an unattributed sale: `owner/slug` (at `version`, or its release on sale
 * at the sale's time) is what it bought. Written as the payment row the sale would have had and
 * settled through the one settlement statement: purchase, entitlement and the creator's credit.
 */
export async function grantUnattributedSale(
  ctx: AppContext,
  transaction: string,
  target: { owner: string; slug: string; version?: string },
): Promise<{ purchaseId: string; listingId: string; version: string; kind: 'new' | 'update' }> {
  const sale = await openSale(ctx, transaction);
  const listing = await findPublicListing(ctx.database.db, target.owner, target.slug);
  if (!listing) throw new AppError('not_found', { message: `no listing ${target.owner}/${target.slug}` });
  const candidate = await grantTarget(ctx.database, sale.payer, listing.id, target.version, sale.at);
  if (!candidate) {
    throw AppError.invalid(
      [{ field: 'version', reason: 'no passing release of the listing on sale' }],
      target.version
        ? `${target.owner}/${target.slug} has no release ${target.version} that passed and went on sale`
        : `${target.owner}/${target.slug} had no release on sale at ${sale.at.toISOString()}: name one with --version`,
    );
  }
  if (candidate.held) {
    throw AppError.invalid(
      [{ field: 'version', reason: 'already held by the payer' }],
      `${sale.payer} holds ${target.owner}/${target.slug}@${candidate.version} already: refund the sale instead`,
    );
  }
  const rail = await ctx.rail();
  const chainSale: ChainSale = {
    transaction: sale.transaction as Hex,
    payer: sale.payer as Address,
    nonce: sale.nonce as Hex,
    amountMicro: sale.amountMicro,
    validAfter: BigInt(Math.floor(sale.validAfter.getTime() / 1000)),
    validBefore: BigInt(Math.floor(sale.validBefore.getTime() / 1000)),
    at: sale.at,
  };
  const row = await insertChainPayment(ctx, rail, chainSale, candidate);
  if (!row) {
    throw AppError.invalid(
      [
        {
          field: 'transaction',
          reason: 'the payer has a payment for that version, or this authorization has a row',
        },
      ],
      `${sale.payer} has another payment for ${target.owner}/${target.slug}@${candidate.version}: refund the sale instead`,
    );
  }
  const purchase = await recordSettlement(ctx, row, sale.transaction);
  await resolveUnattributedSale(
    ctx.database.db,
    sale.transaction,
    { resolution: 'granted', paymentId: row.id },
    ctx.clock.now(),
  );
  logEvent(ctx.log, 'sale.resolved', {
    transaction: sale.transaction,
    resolution: 'granted',
    listing: `${target.owner}/${target.slug}`,
    version: candidate.version,
    purchase_id: purchase.id,
  });
  return { purchaseId: purchase.id, listingId: row.listingId, version: row.version, kind: candidate.kind };
}

/** Records that the operator refunded an unattributed sale by hand: nothing is granted or credited. */
export async function refundUnattributedSale(
  ctx: AppContext,
  transaction: string,
  note: string,
): Promise<UnattributedSaleRow> {
  const sale = await openSale(ctx, transaction);
  const resolved = await resolveUnattributedSale(
    ctx.database.db,
    sale.transaction,
    { resolution: 'refunded', note },
    ctx.clock.now(),
  );
  if (!resolved) return openSale(ctx, transaction);
  logEvent(ctx.log, 'sale.resolved', { transaction: sale.transaction, resolution: 'refunded', note });
  return resolved;
}

/** An unattributed sale as operator commands print it (JSON: amounts as decimal strings). */
export function unattributedSaleView(row: UnattributedSaleRow) {
  return {
    transaction: row.transaction,
    payer: row.payer,
    amount_micro: formatMicroUsdc(row.amountMicro),
    at: row.at.toISOString(),
    reason: row.reason,
    found_at: row.foundAt.toISOString(),
    resolution: row.resolution,
    ...(row.paymentId ? { payment_id: row.paymentId } : {}),
    ...(row.note ? { note: row.note } : {}),
    ...(row.resolvedAt ? { resolved_at: row.resolvedAt.toISOString() } : {}),
  };
}
