import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { isHash } from 'viem';
import type { AppContext } from '../context.js';
import { listingById } from '../listings/service.js';
import { cacheSlot } from '../platform/cache/caches.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { secondsSince } from '../platform/metrics/metrics.js';
import { formatMicroUsdc } from '../platform/money/money.js';
import type { PaymentNetwork } from '../platform/networks.js';
import { announceWebhookEvents, enqueueWebhookEvent } from '../webhooks/events.js';
import { type AuthorizationState, readAuthorization } from '../x402/authorization-state.js';
import type { PaymentRail } from '../x402/rail.js';
import {
  type Claim,
  claimPayment,
  findPaymentById,
  findPurchaseByPayment,
  type PaymentRow,
  type PurchaseRow,
  recordSettled,
  releasePayment,
} from './store.js';

/**
 * Settlement never loses money (DESIGN.md item 8). A payment row exists before `settle` is
 * called; one holder of its lease drives it at a time; only a transaction hash from `settle`, or
 * the chain showing the transfer to us, turns it into a purchase, in one transaction with the
 * entitlement and the creator's ledger credit. A payment whose outcome is unknown is never
 * concluded without reading the chain: it stays `settling`, to be retried with the same
 * authorization or resolved by the reconciler.
 */

export type SettlementOutcome =
  | { state: 'settled'; purchase: PurchaseRow; payment: PaymentRow; response?: SettleResponse }
  | { state: 'pending'; reason: 'settlement_pending' | 'settlement_timeout' }
  | { state: 'failed'; error: AppError };

/** How long a lease outlives the settle timeout, so a slow attempt is not driven twice. */
const LEASE_MARGIN_MS = 5_000;

/** Facilitator refusals that mean nothing was broadcast (the payment itself is unusable as sent). */
const REFUSED_BEFORE_BROADCAST = /insufficient_balance|signature|expired|valid_before|valid_after|mismatch/;

/**
 * Maps a facilitator's verify/settle failure reason, or a failed row's reason, onto SPEC.md's
 * payment codes; `network` is the one paid on, named where the payer must act on it.
 */
export function errorForReason(
  network: PaymentNetwork,
  reason: string | undefined,
  message?: string,
): AppError {
  const text = `${reason ?? ''} ${message ?? ''}`.toLowerCase();
  const detail = { details: { reason: reason ?? 'unknown' } };
  if (text.includes('insufficient_balance') || text.includes('insufficient balance')) {
    return new AppError('insufficient_balance', {
      message: `The payer does not hold enough USDC for this price on ${network.caip2} (${network.name})`,
      ...detail,
    });
  }
  if (text.includes('authorization_canceled')) {
    return new AppError('authorization_mismatch', {
      message: 'The payer cancelled this authorization on chain; take a fresh 402 and sign it',
      ...detail,
    });
  }
  if (text.includes('authorization_used_elsewhere')) {
    return new AppError('authorization_mismatch', {
      message:
        'This authorization was used on chain for a transfer that did not pay this 402; take a fresh 402 and sign it',
      ...detail,
    });
  }
  if (text.includes('valid_before') || text.includes('expired') || text.includes('deadline')) {
    return new AppError('expired_authorization', detail);
  }
  if (text.includes('signature')) {
    return new AppError('invalid_signature', {
      message: 'The payment authorization signature does not verify for its payer',
      ...detail,
    });
  }
  if (text.includes('nonce_already_used')) return new AppError('replay', detail);
  return new AppError('authorization_mismatch', {
    message: `The payment authorization was refused (${reason ?? 'unknown reason'}); take a fresh 402`,
    ...detail,
  });
}

/**
 * Purchase, entitlement and ledger credit for a settled payment, once: written together with the
 * settle mark in one statement (`recordSettled`), so none exists without the others.
 */
export async function recordSettlement(
  ctx: AppContext,
  payment: PaymentRow,
  transaction: string,
): Promise<PurchaseRow> {
  const fee = (payment.amountMicro * BigInt(ctx.config.payments.feeBps)) / 10_000n;
  const recorded = await recordSettled(ctx.database, payment.id, transaction, fee, ctx.clock.now());
  if (!recorded) {
    // Settled already, by another attempt whose purchase this statement's snapshot may predate.
    const existing = await findPurchaseByPayment(ctx.database.db, payment.id);
    if (existing) return existing;
    throw new Error(`payment ${payment.id} is settled without a purchase`);
  }
  logEvent(ctx.log, 'settlement.decided', {
    state: 'settled',
    payment_id: payment.id,
    purchase_id: recorded.purchase.id,
    listing_id: payment.listingId,
    version: payment.version,
    amount_micro: formatMicroUsdc(payment.amountMicro),
    transaction,
    duplicate: recorded.duplicate,
  });
  // The purchase stands whatever happens to its announcement; a failure here is only logged.
  await announceSale(ctx, payment, recorded.purchase, fee, recorded.duplicate).catch((error: unknown) =>
    ctx.log.error({ err: error, purchaseId: recorded.purchase.id }, 'sale webhook event not recorded'),
  );
  if (recorded.duplicate) {
    ctx.log.error(
      { paymentId: payment.id, listingId: payment.listingId, version: payment.version, transaction },
      'a second payment for a version its buyer had already paid for reached the chain; recorded as a duplicate for refund',
    );
  }
  return recorded.purchase;
}

/**
 * The creator's `sale` webhook (docs/WEBHOOKS.md). The settlement is one statement on the hot
 * path, so the event is written right after it rather than inside it (D-173): keyed by the
 * purchase, so a repeat records nothing twice.
 */
async function announceSale(
  ctx: AppContext,
  payment: PaymentRow,
  purchase: PurchaseRow,
  fee: bigint,
  duplicate: boolean,
): Promise<void> {
  const listing = await listingById(ctx.database.db, payment.listingId);
  if (!listing) return;
  const net = payment.amountMicro - fee;
  await enqueueWebhookEvent(
    ctx.database.db,
    {
      type: 'sale',
      creatorId: listing.creatorId,
      listingId: listing.id,
      data: {
        listing: { id: listing.id, owner: listing.owner, slug: listing.slug },
        purchase_id: purchase.id,
        version: purchase.version,
        kind: purchase.kind,
        from_version: purchase.fromVersion,
        buyer: purchase.wallet,
        amount_micro: formatMicroUsdc(payment.amountMicro),
        fee_micro: formatMicroUsdc(fee),
        net_micro: formatMicroUsdc(net > 0n ? net : 0n),
        transaction: purchase.transaction,
        source: purchase.source,
        duplicate,
        at: purchase.createdAt.toISOString(),
      },
      dedupeKey: `sale:${purchase.id}`,
    },
    ctx.clock.now(),
  );
  await announceWebhookEvents(ctx);
}

/** What the chain shows for `payment`; undefined (logged) when it cannot be read. */
export async function chainStateOf(
  ctx: AppContext,
  rail: PaymentRail,
  payment: PaymentRow,
): Promise<AuthorizationState | undefined> {
  try {
    return await readAuthorization(
      rail.reader,
      {
        asset: payment.asset,
        payer: payment.payer,
        nonce: payment.nonce,
        payTo: payment.payTo,
        amountMicro: payment.amountMicro,
        validAfter: validAfterOf(payment),
        validBefore: payment.validBefore,
        seenAt: payment.createdAt,
      },
      ctx.clock.now(),
    );
  } catch (error) {
    ctx.metrics.chainErrors.inc({ operation: 'read_authorization' });
    ctx.log.warn({ err: error, paymentId: payment.id }, 'reading the authorization on chain failed');
    return undefined;
  }
}

/**
 * The outcome the chain decides for `payment`, or undefined when it decides nothing: the
 * authorization is unused and still usable, so settling it is the buyer's intent.
 */
export async function concludeFromChain(
  ctx: AppContext,
  payment: PaymentRow,
  chain: AuthorizationState,
): Promise<SettlementOutcome | undefined> {
  switch (chain.state) {
    case 'paid': {
      const purchase = await recordSettlement(ctx, payment, chain.transaction);
      return { state: 'settled', purchase, payment };
    }
    case 'canceled':
      return fail(ctx, payment, 'authorization_canceled');
    case 'used_elsewhere':
      return fail(ctx, payment, 'authorization_used_elsewhere');
    case 'used_unlocated':
      ctx.log.error(
        { paymentId: payment.id, payer: payment.payer, nonce: payment.nonce },
        'the chain shows this authorization used, but no transfer or cancellation was found near it; it stays settling until an operator looks',
      );
      return keepSettling(ctx, payment, 'used_unlocated');
    case 'unused':
      return chain.expired ? fail(ctx, payment, 'expired_unsettled') : undefined;
  }
}

type SettleResult = { kind: 'response'; response: SettleResponse } | { kind: 'error'; error: unknown };
type SettleAttempt = SettleResult | { kind: 'timeout' };

/**
 * One attempt to settle `payment`, which the caller has claimed. Waits at most the configured
 * settlement timeout; a settle that finishes later is still recorded when it succeeds. When an
 * earlier attempt's outcome is unknown, the chain is read first and, if it cannot be, nothing is
 * sent: settling blind could only add confusion to a payment that may have landed.
 */
export async function driveSettlement(
  ctx: AppContext,
  rail: PaymentRail,
  payment: PaymentRow,
): Promise<SettlementOutcome> {
  const started = performance.now();
  const outcome = await settleOnce(ctx, rail, payment);
  ctx.metrics.settlementDuration.observe({ outcome: outcome.state }, secondsSince(started));
  return outcome;
}

async function settleOnce(
  ctx: AppContext,
  rail: PaymentRail,
  payment: PaymentRow,
): Promise<SettlementOutcome> {
  if (payment.attempts > 1) {
    const chain = await chainStateOf(ctx, rail, payment);
    if (!chain) return keepSettling(ctx, payment, 'chain_unreadable');
    const known = await concludeFromChain(ctx, payment, chain);
    if (known) return known;
  }

  const settle: Promise<SettleResult> = rail.facilitator
    .settle(payment.payload as PaymentPayload, payment.requirements as PaymentRequirements)
    .then(
      (response): SettleResult => ({ kind: 'response', response }),
      (error: unknown): SettleResult => ({ kind: 'error', error }),
    );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<SettleAttempt>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), ctx.config.payments.settlementTimeoutMs);
  });
  const attempt = await Promise.race([settle, timeout]);
  clearTimeout(timer);

  if (attempt.kind === 'timeout') {
    // The lease still covers the settle in flight; whatever it brings is recorded when it comes.
    void settle
      .then((late) => concludeAttempt(ctx, rail, payment, late))
      .catch((error: unknown) => {
        ctx.log.error({ err: error, paymentId: payment.id }, 'recording a late settlement failed');
      });
    return { state: 'pending', reason: 'settlement_timeout' };
  }
  return concludeAttempt(ctx, rail, payment, attempt);
}

async function concludeAttempt(
  ctx: AppContext,
  rail: PaymentRail,
  payment: PaymentRow,
  attempt: SettleResult,
): Promise<SettlementOutcome> {
  // Only a transaction hash is ever stored: a success without one (empty, `unknown`) asks the chain.
  if (attempt.kind === 'response' && attempt.response.success && isHash(attempt.response.transaction)) {
    const purchase = await recordSettlement(ctx, payment, attempt.response.transaction);
    return { state: 'settled', purchase, payment, response: attempt.response };
  }
  const reason =
    attempt.kind === 'error' ? 'facilitator_error' : (attempt.response.errorReason ?? 'settle_failed');
  if (attempt.kind === 'error') {
    ctx.log.warn(
      { err: attempt.error, paymentId: payment.id },
      'facilitator settle failed; asking the chain',
    );
  }
  // Lost, refused or ambiguous: the chain says whether the transfer happened.
  const chain = await chainStateOf(ctx, rail, payment);
  const known = chain && (await concludeFromChain(ctx, payment, chain));
  if (known) return known;
  if (attempt.kind === 'response' && REFUSED_BEFORE_BROADCAST.test(reason)) {
    // The facilitator refused before broadcasting (and the chain, when readable, shows the
    // authorization unused): nothing was charged. The row is failed; the same authorization may
    // be sent again, and the reconciler keeps reading the chain for it while it stays usable.
    return fail(ctx, payment, reason, attempt.response.errorMessage);
  }
  return keepSettling(ctx, payment, reason);
}

async function fail(
  ctx: AppContext,
  payment: PaymentRow,
  reason: string,
  message?: string,
): Promise<SettlementOutcome> {
  await releasePayment(ctx.database.db, payment.id, ctx.clock.now(), {
    state: 'failed',
    errorReason: reason,
  });
  logEvent(ctx.log, 'settlement.decided', {
    state: 'failed',
    payment_id: payment.id,
    listing_id: payment.listingId,
    version: payment.version,
    amount_micro: formatMicroUsdc(payment.amountMicro),
    reason,
  });
  return { state: 'failed', error: errorForReason(ctx.config.payments.network, reason, message) };
}

/** The outcome is not known yet: the row stays `settling` for a retry or the reconciler. */
async function keepSettling(
  ctx: AppContext,
  payment: PaymentRow,
  reason: string,
): Promise<SettlementOutcome> {
  await releasePayment(ctx.database.db, payment.id, ctx.clock.now(), {
    state: 'settling',
    errorReason: reason,
  });
  return { state: 'pending', reason: 'settlement_pending' };
}

function validAfterOf(payment: PaymentRow): Date | undefined {
  const value = (payment.payload as { payload?: { authorization?: { validAfter?: string } } }).payload
    ?.authorization?.validAfter;
  return value && /^\d+$/.test(value) ? new Date(Number(value) * 1000) : undefined;
}

/** Claims `payment` for one attempt, or reports why it cannot be. */
export async function claimForSettlement(ctx: AppContext, paymentId: string): Promise<Claim> {
  const now = ctx.clock.now();
  return claimPayment(ctx.database.db, paymentId, now, leaseUntil(ctx, now));
}

/** How long one attempt holds a payment: the settle's timeout and a margin to record its answer. */
export function leaseUntil(ctx: AppContext, now: Date): Date {
  return new Date(now.getTime() + ctx.config.payments.settlementTimeoutMs + LEASE_MARGIN_MS);
}

/** Settlements this context is driving: waiters here await them instead of polling the database. */
const attemptsInFlight = cacheSlot(() => new Map<string, Promise<unknown>>());

/** Runs `drive` as the one attempt on `paymentId` in this process, visible to `awaitOtherAttempt`. */
export function trackAttempt<T>(ctx: AppContext, paymentId: string, drive: () => Promise<T>): Promise<T> {
  const inFlight = ctx.caches.get(attemptsInFlight);
  const run = drive();
  const settled = run.catch(() => {});
  inFlight.set(paymentId, settled);
  void settled.then(() => {
    if (inFlight.get(paymentId) === settled) inFlight.delete(paymentId);
  });
  return run;
}

const POLL_MS = 200;

/**
 * Waits while another request drives `paymentId` (up to the settlement timeout), then returns the
 * row as it stands: settled, or still unsettled. An attempt in this process is awaited directly;
 * one in another process is polled.
 */
export async function awaitOtherAttempt(ctx: AppContext, paymentId: string): Promise<PaymentRow | undefined> {
  const deadline = Date.now() + ctx.config.payments.settlementTimeoutMs;
  const inFlight = ctx.caches.get(attemptsInFlight);
  for (;;) {
    const local = inFlight.get(paymentId);
    if (local) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        local,
        new Promise((resolve) => {
          timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        }),
      ]);
      clearTimeout(timer);
    }
    const row = await findPaymentById(ctx.database.db, paymentId);
    if (!row || row.state === 'settled' || !row.leaseUntil || row.leaseUntil <= ctx.clock.now()) return row;
    if (Date.now() >= deadline) return row;
    if (!inFlight.has(paymentId)) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
