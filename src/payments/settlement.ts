import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { type Address, type Hex, parseAbiItem } from 'viem';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { DevUSDC } from './devnet/artifacts.js';
import type { PaymentRail } from './rail.js';
import {
  claimPayment,
  findPaymentById,
  findPurchaseByPayment,
  insertCredit,
  insertEntitlement,
  insertPurchase,
  markSettled,
  type PaymentRow,
  type PurchaseRow,
  releasePayment,
} from './store.js';

/**
 * Settlement never loses money (DESIGN.md item 8). A payment row exists before `settle` is
 * called; one holder of its lease drives it at a time; only a transaction hash from `settle` (or
 * the chain showing the authorization used) turns it into a purchase, in one transaction with the
 * entitlement and the creator's ledger credit. Anything unclear leaves the row `settling`, to be
 * retried with the same authorization or resolved by the reconciler.
 */

export type SettlementOutcome =
  | { state: 'settled'; purchase: PurchaseRow; payment: PaymentRow; response?: SettleResponse }
  | { state: 'pending'; reason: 'settlement_pending' | 'settlement_timeout' }
  | { state: 'failed'; error: AppError };

/** How long a lease outlives the settle timeout, so a slow attempt is not driven twice. */
const LEASE_MARGIN_MS = 5_000;

const authorizationUsedEvent = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);

/** Maps a facilitator's verify/settle failure reason onto SPEC.md's payment codes. */
export function errorForReason(reason: string | undefined, message?: string): AppError {
  const text = `${reason ?? ''} ${message ?? ''}`.toLowerCase();
  const detail = { details: { reason: reason ?? 'unknown' } };
  if (text.includes('insufficient_balance') || text.includes('insufficient balance')) {
    return new AppError('insufficient_balance', {
      message: 'The payer does not hold enough USDC for this price on eip155:8453',
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

/** Whether the token shows this authorization as used, and by which transaction. */
export async function authorizationOnChain(
  rail: PaymentRail,
  payment: Pick<PaymentRow, 'asset' | 'payer' | 'nonce'>,
): Promise<{ used: boolean; transaction?: Hex } | undefined> {
  if (!rail.reader) return undefined;
  const used = (await rail.reader.readContract({
    address: payment.asset as Address,
    abi: DevUSDC.abi,
    functionName: 'authorizationState',
    args: [payment.payer as Address, payment.nonce as Hex],
  })) as boolean;
  if (!used) return { used };
  const logs = await rail.reader.getLogs({
    address: payment.asset as Address,
    event: authorizationUsedEvent,
    args: { authorizer: payment.payer as Address, nonce: payment.nonce as Hex },
    fromBlock: 0n,
  });
  return { used, transaction: logs.at(-1)?.transactionHash ?? undefined };
}

/** Purchase, entitlement and ledger credit for a settled payment, once. */
export async function recordSettlement(
  ctx: AppContext,
  payment: PaymentRow,
  transaction: string,
): Promise<PurchaseRow> {
  const now = ctx.clock.now();
  return ctx.database.db.transaction(async (tx) => {
    const settled = await markSettled(tx, payment.id, transaction, now);
    if (!settled) {
      const existing = await findPurchaseByPayment(tx, payment.id);
      if (existing) return existing;
      throw new Error(`payment ${payment.id} is settled without a purchase`);
    }
    const purchase = await insertPurchase(tx, {
      listingId: settled.listingId,
      wallet: settled.payer,
      version: settled.version,
      kind: settled.kind,
      fromVersion: settled.fromVersion,
      amountMicro: settled.amountMicro,
      allVersions: settled.updatePriceMicro === 0n,
      source: settled.source,
      paymentId: settled.id,
      transaction,
      createdAt: now,
    });
    await insertEntitlement(tx, {
      wallet: settled.payer,
      listingId: settled.listingId,
      version: settled.version,
      purchaseId: purchase.id,
      createdAt: now,
    });
    const fee = (settled.amountMicro * BigInt(ctx.config.payments.feeBps)) / 10_000n;
    if (settled.amountMicro - fee > 0n) {
      await insertCredit(tx, {
        creatorId: settled.creatorId,
        amountMicro: settled.amountMicro - fee,
        feeMicro: fee,
        purchaseId: purchase.id,
        createdAt: now,
      });
    }
    return purchase;
  });
}

type SettleResult = { kind: 'response'; response: SettleResponse } | { kind: 'error'; error: unknown };
type SettleAttempt = SettleResult | { kind: 'timeout' };

/**
 * One attempt to settle `payment`, which the caller has claimed. Waits at most the configured
 * settlement timeout; a settle that finishes later is still recorded when it succeeds.
 */
export async function driveSettlement(
  ctx: AppContext,
  rail: PaymentRail,
  payment: PaymentRow,
): Promise<SettlementOutcome> {
  // A previous attempt may have landed on chain without our hearing of it (a first attempt has none).
  if (payment.attempts > 1) {
    const before = await authorizationOnChain(rail, payment).catch(() => undefined);
    if (before?.used) return settledFromChain(ctx, payment, before.transaction);
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
  const now = () => ctx.clock.now();
  if (attempt.kind === 'response' && attempt.response.success && attempt.response.transaction) {
    const purchase = await recordSettlement(ctx, payment, attempt.response.transaction);
    return { state: 'settled', purchase, payment, response: attempt.response };
  }
  if (attempt.kind === 'error') {
    ctx.log.warn(
      { err: attempt.error, paymentId: payment.id },
      'facilitator settle failed; the payment stays settling',
    );
    const onChain = await authorizationOnChain(rail, payment).catch(() => undefined);
    if (onChain?.used) return settledFromChain(ctx, payment, onChain.transaction);
    await releasePayment(ctx.database.db, payment.id, now(), {
      state: 'settling',
      errorReason: 'facilitator_error',
    });
    return { state: 'pending', reason: 'settlement_pending' };
  }
  const { response } = attempt;
  const reason = response.errorReason ?? 'settle_failed';
  // Broadcast but not confirmed, or refused because it already went through: ask the chain.
  const onChain = await authorizationOnChain(rail, payment).catch(() => undefined);
  if (onChain?.used) return settledFromChain(ctx, payment, onChain.transaction ?? response.transaction);
  const definitive = /insufficient_balance|signature|expired|valid_before|valid_after|mismatch/.test(reason);
  if (reason === 'settlement_pending' || reason.includes('nonce_already_used') || (!onChain && !definitive)) {
    await releasePayment(ctx.database.db, payment.id, now(), {
      state: 'settling',
      errorReason: reason,
      transaction: response.transaction || undefined,
    });
    if (reason.includes('nonce_already_used')) {
      return {
        state: 'failed',
        error: new AppError('replay', { message: 'This authorization was already used' }),
      };
    }
    return { state: 'pending', reason: 'settlement_pending' };
  }
  // Nothing was charged (the chain shows the authorization unused, or the facilitator refused it
  // before broadcasting): the row is `failed`, and the same authorization may be retried.
  await releasePayment(ctx.database.db, payment.id, now(), { state: 'failed', errorReason: reason });
  return { state: 'failed', error: errorForReason(reason, response.errorMessage) };
}

async function settledFromChain(
  ctx: AppContext,
  payment: PaymentRow,
  transaction: string | undefined,
): Promise<SettlementOutcome> {
  const purchase = await recordSettlement(ctx, payment, transaction ?? 'unknown');
  return { state: 'settled', purchase, payment };
}

/** Claims `payment` for one attempt, or reports who has it. */
export async function claimForSettlement(
  ctx: AppContext,
  paymentId: string,
): Promise<PaymentRow | undefined> {
  const now = ctx.clock.now();
  return claimPayment(
    ctx.database.db,
    paymentId,
    now,
    new Date(now.getTime() + ctx.config.payments.settlementTimeoutMs + LEASE_MARGIN_MS),
  );
}

/** Settlements this process is driving: waiters here await them instead of polling the database. */
const inFlight = new Map<string, Promise<unknown>>();

/** Runs `drive` as the one attempt on `paymentId` in this process, visible to `awaitOtherAttempt`. */
export function trackAttempt<T>(paymentId: string, drive: () => Promise<T>): Promise<T> {
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
