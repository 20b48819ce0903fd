import { isDeepStrictEqual } from 'node:util';
import type { PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { authorizationTypes } from '@x402/evm';
import type { Address, Hex, PublicClient } from 'viem';
import type { AppContext } from '../context.js';
import { recoversTo } from '../identity/ecrecover.js';
import { verifyWalletSignatureHeader } from '../identity/wallet-signature.js';
import type { PublicListing } from '../listings/public-listings.js';
import { listingCacheSlot } from '../platform/cache/caches.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { assertCountryAllowed, assertNotSanctioned } from '../platform/limits/compliance.js';
import { parseMicroUsdc } from '../platform/money/money.js';
import { publishedRelease, updateOffer } from '../releases/service.js';
import { authorizationDigest } from '../x402/authorization-digest.js';
import type { Offer } from '../x402/offer.js';
import { type DecodedPayment, decodePaymentSignature } from '../x402/payment-header.js';
import { type PaymentRequiredBody, paymentRequiredBody, requirementsFor } from '../x402/payment-required.js';
import { type Quote, quoteIsCurrent, readQuote, signQuote } from '../x402/quotes.js';
import type { PaymentRail } from '../x402/rail.js';
import { resourcePath } from '../x402/resource-url.js';
import { type GrantableRelease, grantFor } from './grants.js';
import { holdingOf } from './holdings.js';
import { offerFor } from './pricing.js';
import { cachedSaleHead, type PayingHead, readPayingHead, readSaleHead } from './sale-heads.js';
import type { Grant, GrantKind } from './schemas.js';
import {
  awaitOtherAttempt,
  claimForSettlement,
  driveSettlement,
  errorForReason,
  leaseUntil,
  type SettlementOutcome,
  trackAttempt,
} from './settlement.js';
import {
  type ClaimedPayment,
  findPayment,
  findPaymentById,
  findPurchaseByPayment,
  findSlotHolder,
  insertEntitlement,
  insertNewBuyerPayment,
  insertPayment,
  insertPurchase,
  type PaymentRow,
} from './store.js';

/**
 * Buying the latest release (GET /api/r/{owner}/{slug} and the MCP `purchase` tool): SPEC.md's
 * "Purchase attempt" table. The 402 path reads only; a payment is checked against its quote,
 * verified by the facilitator, then settled through a payment row (settlement.ts).
 */

export type PurchaseSource = 'http' | 'mcp';

export interface BuyRequest {
  owner: string;
  slug: string;
  /** `PAYMENT-SIGNATURE`. */
  paymentSignature?: string;
  /** `X-Quote-Id`. */
  quoteId?: string;
  /** `X-Wallet-Signature`. */
  walletSignature?: string;
  source: PurchaseSource;
  /** The caller's country (`requestCountry`), for the jurisdiction check. */
  country?: string;
}

export type BuyResult =
  | { status: 'granted'; grant: Grant; paymentResponse?: SettleResponse }
  | { status: 'payment_required'; paymentRequired: PaymentRequiredResponse };

/** A 402 answer serialised once: its body, the same JSON as bytes, and the `PAYMENT-REQUIRED` header. */
export interface PaymentRequiredResponse {
  body: PaymentRequiredBody;
  json: Buffer;
  header: string;
}

function paymentRequiredResponse(body: PaymentRequiredBody): PaymentRequiredResponse {
  const json = Buffer.from(JSON.stringify(body), 'utf8');
  return { body, json, header: json.toString('base64') };
}

/**
 * The new-buyer 402 of a listing, the same for every anonymous caller: built once a second at
 * most (its quote then has at least 299 of its 300 seconds left) and dropped with the listing's
 * cached head, so a changed price is never quoted by this process after the change.
 */
const anonymousOffers = listingCacheSlot<PaymentRequiredResponse>({
  max: 10_000,
  ttlMs: 1000,
  keyedByListing: true,
});

/** Buys the listing's latest release (or answers its 402), counted by outcome and logged when granted. */
export function buyLatest(ctx: AppContext, request: BuyRequest): Promise<BuyResult> {
  return buy(ctx, request).then(
    (result) => {
      if (result.status === 'payment_required') {
        ctx.metrics.countPurchase('payment_required');
      } else {
        const { grant } = result;
        ctx.metrics.countPurchase(grant.kind);
        logEvent(ctx.log, 'purchase.granted', {
          listing: `${request.owner}/${request.slug}`,
          version: grant.version,
          kind: grant.kind,
          purchase_id: grant.purchase_id,
          transaction: grant.transaction,
          via: request.source,
        });
      }
      return result;
    },
    (error: unknown) => {
      ctx.metrics.countPurchase('refused', error instanceof AppError ? error.code : 'internal');
      throw error;
    },
  );
}

async function buy(ctx: AppContext, request: BuyRequest): Promise<BuyResult> {
  assertCountryAllowed(ctx.config.compliance, request.country);
  // With a payment the payer is the authorization's signer, so an X-Wallet-Signature beside it
  // is not read (nor used up): x402 clients resend the first request's headers with the payment.
  if (request.paymentSignature !== undefined) return buyWithPayment(ctx, request.paymentSignature, request);
  const head = await cachedSaleHead(ctx, request.owner, request.slug);
  if (!head) throw notFound();
  const { listing, release } = head;
  const rail = await ctx.rail();
  const wallet =
    request.walletSignature === undefined
      ? undefined
      : await verifyWalletSignatureHeader(ctx, request.walletSignature);
  if (wallet) await assertNotSanctioned(ctx.config.compliance, wallet);
  const holding = wallet ? await holdingOf(ctx.database, wallet, listing.id) : undefined;
  const offer = offerFor(listing, release.version, holding);
  if (offer.kind === 'owned') {
    return { status: 'granted', grant: await grantFor(ctx, release, { kind: 'owned' }) };
  }
  if (listing.status === 'retired') throw retired();
  if (listing.suspendedAt) throw suspendedListing(listing);
  if (offer.amountMicro === 0n) return freeGrant(ctx, release, offer, wallet, request.source);
  const build = async () => paymentRequiredResponse(await paymentRequired(ctx, rail, offer, request.source));
  return {
    status: 'payment_required',
    paymentRequired: wallet
      ? await build()
      : await ctx.caches
          .get(anonymousOffers)
          .get(`${listing.owner}/${listing.slug}\n${request.source}`, build),
  };
}

export async function paymentRequired(
  ctx: AppContext,
  rail: PaymentRail,
  offer: Offer,
  source: PurchaseSource = 'http',
): Promise<PaymentRequiredBody> {
  const expiresAt = new Date(ctx.clock.now().getTime() + 300_000);
  const id = signQuote(ctx.appSecret, { ...offer, expiresAt });
  const update =
    offer.kind === 'update'
      ? await updateOffer(
          ctx.database.db,
          { id: offer.listingId, ...offer },
          offer.fromVersion!,
          offer.version,
        )
      : undefined;
  return paymentRequiredBody(ctx.config.baseUrl, rail, offer, { id, expiresAt }, update, source);
}

/**
 * A price of zero: granted at once; a known wallet gets the version recorded as held, that version
 * only. "Updates included" (an update price of `0`) is what a buyer pays for: a free claim is not
 * stamped `all_versions`, so the versions after it follow the update price in force.
 */
async function freeGrant(
  ctx: AppContext,
  release: GrantableRelease,
  offer: Offer,
  wallet: Address | undefined,
  source: PurchaseSource,
): Promise<BuyResult> {
  let purchaseId: string | undefined;
  if (wallet) {
    const now = ctx.clock.now();
    purchaseId = await ctx.database.db.transaction(async (tx) => {
      const purchase = await insertPurchase(tx, {
        listingId: offer.listingId,
        wallet: wallet.toLowerCase(),
        version: offer.version,
        kind: offer.kind,
        fromVersion: offer.fromVersion,
        amountMicro: 0n,
        allVersions: false,
        source,
        createdAt: now,
      });
      await insertEntitlement(tx, {
        wallet: wallet.toLowerCase(),
        listingId: offer.listingId,
        version: offer.version,
        purchaseId: purchase.id,
        createdAt: now,
      });
      return purchase.id;
    });
  }
  return { status: 'granted', grant: await grantFor(ctx, release, { kind: 'free', purchaseId }) };
}

/**
 * A payment decides on the listing as it is now, never on the cached head: either the insert of
 * its row checks that the offer still stands (`payOnCachedHead`), or listing, release on sale, the
 * payer's holding and the authorization's row are read together first (`readPayingHead`).
 */
async function buyWithPayment(
  ctx: AppContext,
  paymentSignature: string,
  request: BuyRequest,
): Promise<BuyResult> {
  let payment: DecodedPayment;
  try {
    payment = decodePaymentSignature(paymentSignature);
  } catch (error) {
    // An unknown listing is a 404 whatever the payment header holds.
    if (!(await readSaleHead(ctx.database.db, request.owner, request.slug))) throw notFound();
    throw error;
  }
  const rail = await ctx.rail();
  const { authorization } = payment;
  const key = {
    asset: rail.asset.toLowerCase(),
    payer: authorization.from.toLowerCase(),
    nonce: authorization.nonce,
  };
  const fast = await payOnCachedHead(ctx, rail, payment, key, request);
  if ('paid' in fast) return fast.paid;
  const head = await readPayingHead(ctx.database, request.owner, request.slug, key);
  if (!head) throw notFound();
  return payWith(ctx, rail, head, payment, key, request, fast.verified);
}

/**
 * The common purchase, a new buyer paying the quote of a 402 just served, in two statements rather
 * than three: decided on the cached sale head, verified, then its row written by an insert that
 * checks, as it runs, that the offer still stands (`insertNewBuyerPayment`). Anything else (another
 * kind of quote, a check failing, a verify that refuses or throws, a row not written: a replay, a
 * retry, an owner, a stale cache) is left to the fresh path, with the verify's answer or error when
 * it was asked, so the facilitator is not asked twice. As on the fresh path, nothing is written for a
 * payment the facilitator has not accepted.
 */
async function payOnCachedHead(
  ctx: AppContext,
  rail: PaymentRail,
  payment: DecodedPayment,
  key: PaymentKey,
  request: BuyRequest,
): Promise<{ paid: BuyResult } | { verified?: PriorVerify }> {
  const { quote } = presentedQuote(ctx, request, payment);
  if (quote?.kind !== 'new') return {};
  const head = await cachedSaleHead(ctx, request.owner, request.slug);
  if (head?.listing.status !== 'published' || head.listing.suspendedAt) return {};
  const now = ctx.clock.now();
  const offer = offerFor(head.listing, head.release.version);
  if (offer.amountMicro === 0n || !quoteIsCurrent(quote, offer, now)) return {};
  await assertNotSanctioned(ctx.config.compliance, payment.authorization.from);
  const requirements = requirementsFor(rail, offer);
  if (unsettleable(payment, rail, now) || mismatch(payment, requirements, head.listing, now)) return {};
  const answer = rail.facilitator.verify(payment.payload, requirements);
  const verified = { requirements, answer };
  // A verify that throws is the fresh path's to answer too: a replay or an owner is answered there
  // without the facilitator, and a new buyer gets this very error from it.
  const response = await answer.catch(() => undefined);
  if (!response?.isValid || namesAnotherPayer(response, key.payer)) return { verified };
  const row = claimedRow(ctx, rail, head.listing, offer, payment, key, requirements, request.source);
  const inserted = await insertNewBuyerPayment(ctx.database, row, head.release.id);
  return inserted ? { paid: await settleClaimed(ctx, rail, inserted, head) } : { verified };
}

/** A verify already asked of the facilitator for these requirements, and its answer (or error). */
interface PriorVerify {
  requirements: PaymentRequirements;
  answer: Promise<VerifyResponse>;
}

/** The unique key of an authorization's payment row. */
interface PaymentKey {
  asset: string;
  payer: string;
  nonce: string;
}

/**
 * The quote a paying request names (X-Quote-Id, else the one echoed in its payload): its id as
 * sent, and the quote when we signed it.
 */
function presentedQuote(
  ctx: AppContext,
  request: BuyRequest,
  payment: DecodedPayment,
): { id?: string; quote?: Quote } {
  const id = request.quoteId ?? echoedQuoteId(payment);
  return { id, quote: id ? readQuote(ctx.appSecret, id) : undefined };
}

/** Whether a verify names a payer other than the authorization's `from` (lower case). */
function namesAnotherPayer(response: VerifyResponse, payer: string): boolean {
  return response.payer !== undefined && response.payer.toLowerCase() !== payer;
}

async function payWith(
  ctx: AppContext,
  rail: PaymentRail,
  head: PayingHead,
  payment: DecodedPayment,
  key: PaymentKey,
  request: BuyRequest,
  prior?: PriorVerify,
): Promise<BuyResult> {
  const { listing, release, holding } = head;
  const { authorization } = payment;
  await assertNotSanctioned(ctx.config.compliance, authorization.from);
  // What is decided on `from` without the facilitator's verify (an existing row driven for whoever
  // presents its key, an owner's grant, a free record, a refusal that looks at the payer's other
  // payments) first proves that `from` signed; a new priced payment is proven by the verify.
  const db = ctx.database.db;
  const existing = head.paymentId === undefined ? undefined : await findPaymentById(db, head.paymentId);
  if (existing) {
    await assertSignedByPayer(ctx, rail, payment);
    return continuePayment(ctx, rail, ownRow(existing, listing), head);
  }
  const refused = unsettleable(payment, rail, ctx.clock.now());
  if (refused) throw refused;
  const offer = offerFor(listing, release.version, holding);
  if (offer.kind === 'owned' || offer.amountMicro === 0n) await assertSignedByPayer(ctx, rail, payment);
  if (offer.kind === 'owned') {
    return { status: 'granted', grant: await grantFor(ctx, release, { kind: 'owned', listing }) };
  }
  if (listing.status === 'retired') throw retired();
  if (listing.suspendedAt) throw suspendedListing(listing);
  if (offer.amountMicro === 0n) return freeGrant(ctx, release, offer, authorization.from, request.source);

  const { id: quoteId, quote } = presentedQuote(ctx, request, payment);
  if (!quote || !quoteIsCurrent(quote, offer, ctx.clock.now())) {
    throw new AppError('price_changed', {
      message: quoteId
        ? 'The quote is no longer current (price, version or your purchase kind changed, or it expired); sign the attached 402'
        : 'A priced purchase needs X-Quote-Id (extra.quote_id of the 402 being paid); sign the attached 402',
      details: { payment_required: await paymentRequired(ctx, rail, offer, request.source) },
    });
  }

  const requirements = requirementsFor(rail, offer);
  const mismatched = mismatch(payment, requirements, listing, ctx.clock.now());
  if (mismatched) throw mismatched;
  // Asked once per payment: the cached-head path may have asked already, for these requirements.
  const verified =
    prior && isDeepStrictEqual(prior.requirements, requirements)
      ? await prior.answer
      : await rail.facilitator.verify(payment.payload, requirements);
  if (verified.isValid && namesAnotherPayer(verified, key.payer)) {
    throw notSignedByPayer();
  }
  if (!verified.isValid) {
    // A refusal may say nothing of the signature (a nonce used already is reported before it).
    await assertSignedByPayer(ctx, rail, payment);
    const error = errorForReason(rail.network, verified.invalidReason, verified.invalidMessage);
    // Used already: by a concurrent request of ours, or on chain without us (its payer may have
    // executed it). Either way it gets a row, and the row is decided by the chain, never refused
    // as a replay without the purchase it paid for.
    if (error.code !== 'replay') {
      // Another payment of this buyer for this version may be what spent the balance this one
      // was verified against (parallel authorizations, other nonces): answer as the one-payment-
      // per-version rule does, pending and then owned, not with that payment's side effect.
      const holder = await findSlotHolder(db, listing.id, key.payer, offer.version);
      if (holder) return whileSlotTaken(ctx, holder);
      throw error;
    }
  }

  const row = claimedRow(ctx, rail, listing, offer, payment, key, requirements, request.source);
  // Twice at most: the slot's holder may fail between our insert and our read of it.
  for (let round = 0; round < 2; round += 1) {
    const inserted = await insertPayment(ctx.database, row);
    if (inserted) return settleClaimed(ctx, rail, inserted, head);
    const own = await findPayment(db, key.asset, key.payer, key.nonce);
    if (own) return continuePayment(ctx, rail, ownRow(own, listing), head);
    const holder = await findSlotHolder(db, listing.id, key.payer, offer.version);
    if (holder) return whileSlotTaken(ctx, holder);
  }
  throw pending('settlement_pending');
}

/** The row of a new payment for `offer`, inserted already claimed for its first attempt. */
function claimedRow(
  ctx: AppContext,
  rail: PaymentRail,
  listing: { id: string; creatorId: string },
  offer: Offer,
  payment: DecodedPayment,
  key: PaymentKey,
  requirements: ReturnType<typeof requirementsFor>,
  source: PurchaseSource,
): ClaimedPayment {
  const now = ctx.clock.now();
  return {
    asset: key.asset,
    payer: key.payer,
    nonce: key.nonce,
    network: rail.network.caip2,
    payTo: rail.payTo.toLowerCase(),
    amountMicro: offer.amountMicro,
    listingId: listing.id,
    creatorId: listing.creatorId,
    version: offer.version,
    kind: offer.kind,
    fromVersion: offer.fromVersion ?? null,
    updatePriceMicro: offer.updatePriceMicro,
    source,
    payload: payment.payload,
    requirements,
    validBefore: new Date(Number(payment.authorization.validBefore) * 1000),
    // Inserted already claimed for this first attempt (as claimForSettlement would leave it),
    // which saves the claim's round trip; a crash before the settle leaves a lease that expires.
    state: 'settling',
    leaseUntil: leaseUntil(ctx, now),
    attempts: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Why a new authorization is not one this service could settle (it pays another address, or has
 * expired), if it is not. The owner's grant and a free record take it as proof of its wallet, and
 * an authorization that wallet signed for anyone else becomes public once it is executed on chain;
 * replayed here, it must not unlock what the wallet owns.
 */
function unsettleable(payment: DecodedPayment, rail: PaymentRail, now: Date): AppError | undefined {
  const { authorization } = payment;
  if (authorization.to.toLowerCase() !== rail.payTo.toLowerCase()) {
    return new AppError('authorization_mismatch', {
      message: "The authorization pays another address than this service's; sign this listing's 402",
      details: { mismatched: ['authorization.to'] },
    });
  }
  if (authorization.validBefore <= BigInt(Math.floor(now.getTime() / 1000))) {
    return new AppError('expired_authorization', {
      message: 'The authorization has expired; request the resource again for a fresh 402 and sign it',
    });
  }
  return undefined;
}

/**
 * An authorization is bound to the listing whose 402 it paid: presented on another listing's route
 * it is refused, so a cheap listing's payment can never unlock a dear one's artifact.
 */
function ownRow(row: PaymentRow, listing: PublicListing): PaymentRow {
  if (row.listingId !== listing.id) {
    throw new AppError('authorization_mismatch', {
      // Which listing is not said: an authorization becomes public once settled on chain, and the
      // wallet's entitlements are shown only to a wallet signature.
      message:
        "This authorization was already used for another listing (GET /api/entitlements with X-Wallet-Signature lists what your wallet holds); to buy this one, sign this listing's 402",
      details: { mismatched: ['listing'] },
    });
  }
  return row;
}

async function assertSignedByPayer(
  ctx: AppContext,
  rail: PaymentRail,
  payment: DecodedPayment,
): Promise<void> {
  if (!(await signedByPayer(ctx, rail, payment))) throw notSignedByPayer();
}

function notSignedByPayer(): AppError {
  return new AppError('invalid_signature', {
    message: 'The payment authorization is not signed by its `from` address',
  });
}

/**
 * Whether `from` signed the authorization (EIP-712 over the token's domain, as the token checks
 * it). Plain ECDSA first; a chain reader also accepts smart wallets (EIP-1271, ERC-6492).
 */
async function signedByPayer(ctx: AppContext, rail: PaymentRail, payment: DecodedPayment): Promise<boolean> {
  const parameters = {
    address: payment.authorization.from,
    domain: { ...rail.tokenDomain, chainId: rail.network.chainId, verifyingContract: rail.asset },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization' as const,
    message: payment.authorization,
    signature: (payment.payload.payload as { signature: Hex }).signature,
  };
  const digest = authorizationDigest(parameters.domain, payment.authorization);
  // An authorization that cannot be encoded as EIP-712 data is no one's signature.
  if (!digest) return false;
  if (recoversTo(digest, parameters.signature, parameters.address)) return true;
  // viem's overloads over block selectors do not narrow for a literal without one.
  const onChain = parameters as unknown as Parameters<PublicClient['verifyTypedData']>[0];
  return rail.reader.verifyTypedData(onChain).catch((error: unknown) => {
    // Refused as unsigned (the payer may retry), but an RPC failure must not pass unseen.
    ctx.log.warn(
      { err: error, payer: payment.authorization.from },
      'reading a smart-wallet signature on chain failed; the payment is refused as unsigned',
    );
    return false;
  });
}

/** Drives an authorization's row to an answer: settle it, wait for whoever is, or report it. */
async function continuePayment(
  ctx: AppContext,
  rail: PaymentRail,
  row: PaymentRow,
  head: Pick<PayingHead, 'listing' | 'release'>,
): Promise<BuyResult> {
  if (row.state === 'settled') throw await replayError(ctx, row);
  const claim = await claimForSettlement(ctx, row.id);
  if ('slotTaken' in claim) {
    const holder = await findSlotHolder(ctx.database.db, row.listingId, row.payer, row.version);
    if (holder) return whileSlotTaken(ctx, holder);
    throw pending('settlement_pending');
  }
  if ('busy' in claim) {
    const after = await awaitOtherAttempt(ctx, row.id);
    if (after?.state === 'settled') throw await replayError(ctx, after);
    if (after?.state === 'failed' && after.errorReason)
      throw errorForReason(ctx.config.payments.network, after.errorReason);
    throw pending('settlement_pending');
  }
  return settleClaimed(ctx, rail, claim.claimed, head);
}

/** Settles a payment this request holds the lease of, and answers with what came of it. */
async function settleClaimed(
  ctx: AppContext,
  rail: PaymentRail,
  claimed: PaymentRow,
  head: Pick<PayingHead, 'listing' | 'release'>,
): Promise<BuyResult> {
  return outcomeToResult(
    ctx,
    await trackAttempt(ctx, claimed.id, () => driveSettlement(ctx, rail, claimed)),
    head,
  );
}

/**
 * The buyer already has a payment settling or settled for this version (another authorization,
 * perhaps through another process): this one is never settled. Once that one has settled, the
 * version is theirs and is granted; until then the answer is `settlement_pending`.
 */
async function whileSlotTaken(ctx: AppContext, holder: PaymentRow): Promise<BuyResult> {
  const settled = holder.state === 'settled' ? holder : await awaitOtherAttempt(ctx, holder.id);
  if (settled?.state !== 'settled') throw pending('settlement_pending');
  const owned = await publishedRelease(ctx.database.db, settled.listingId, settled.version);
  if (!owned) throw pending('settlement_pending');
  return { status: 'granted', grant: await grantFor(ctx, owned, { kind: 'owned' }) };
}

/** `head`: the listing and release on sale that the paying request read. */
async function outcomeToResult(
  ctx: AppContext,
  outcome: SettlementOutcome,
  head: Pick<PayingHead, 'listing' | 'release'>,
): Promise<BuyResult> {
  if (outcome.state === 'pending') throw pending(outcome.reason);
  if (outcome.state === 'failed') throw outcome.error;
  const { purchase, response } = outcome;
  const { listing, release } = head;
  // The grant is always for what was bought: a retry of an older attempt gets the version it was quoted for.
  const bought =
    purchase.listingId === release.listingId && purchase.version === release.version
      ? release
      : await publishedRelease(ctx.database.db, purchase.listingId, purchase.version);
  if (!bought) throw new Error(`purchase ${purchase.id} settled for a release that is not published`);
  const grant = await grantFor(ctx, bought, {
    kind: purchase.kind satisfies GrantKind,
    purchaseId: purchase.id,
    transaction: purchase.transaction ?? undefined,
    ...(bought.listingId === listing.id ? { listing } : {}),
  });
  return { status: 'granted', grant, paymentResponse: response };
}

async function replayError(ctx: AppContext, row: PaymentRow): Promise<AppError> {
  const purchase = await findPurchaseByPayment(ctx.database.db, row.id);
  return new AppError('replay', {
    message:
      'This authorization was already used; the existing purchase is attached. Re-fetch with X-Wallet-Signature',
    details: {
      purchase: purchase && {
        purchase_id: purchase.id,
        version: purchase.version,
        kind: purchase.kind,
        all_versions: purchase.allVersions,
        transaction: purchase.transaction,
        created_at: purchase.createdAt.toISOString(),
      },
    },
  });
}

/**
 * How the signed authorization differs from what the quote asked for, if it does: checked before
 * the facilitator. Its recipient and expiry are checked for every new authorization (`unsettleable`).
 * The resource the client echoes (x402 v2's `resource`, and the `accepts[].resource` alias) must
 * name this listing: an authorization signed for one listing's 402 never pays for another at the
 * same price. Its path is compared, not its origin: every API process answers for every listing,
 * whatever base URL its 402 carried. Those fields are not under the EIP-3009 signature, so this
 * stops a client's mistake and a header replayed as it is, not someone who rewrites it
 * (docs/SECURITY.md).
 */
function mismatch(
  payment: DecodedPayment,
  requirements: ReturnType<typeof requirementsFor>,
  listing: { owner: string; slug: string },
  now: Date,
): AppError | undefined {
  const { accepted } = payment.payload;
  const { authorization } = payment;
  const mismatches: string[] = [];
  const echoedResources = [payment.payload.resource?.url, (accepted as { resource?: unknown }).resource];
  const path = resourcePath(listing.owner, listing.slug);
  if (echoedResources.some((echoed) => echoed !== undefined && !namesPath(echoed, path))) {
    mismatches.push('resource');
  }
  if (accepted.scheme !== requirements.scheme) mismatches.push('scheme');
  if (accepted.network !== requirements.network) mismatches.push('network');
  if (accepted.asset.toLowerCase() !== requirements.asset.toLowerCase()) mismatches.push('asset');
  if (accepted.payTo.toLowerCase() !== requirements.payTo.toLowerCase()) mismatches.push('payTo');
  if (accepted.amount !== requirements.amount) mismatches.push('amount');
  if (authorization.value !== parseMicroUsdc(requirements.amount)) mismatches.push('authorization.value');
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  if (authorization.validAfter > nowSeconds) mismatches.push('authorization.validAfter (not yet valid)');
  if (authorization.validBefore > nowSeconds + BigInt(requirements.maxTimeoutSeconds) + 60n) {
    mismatches.push('authorization.validBefore (beyond maxTimeoutSeconds)');
  }
  if (mismatches.length > 0) {
    return new AppError('authorization_mismatch', {
      message: `The payment does not match this listing's 402 (${mismatches.join(', ')}); take a fresh 402`,
      details: { mismatched: mismatches },
    });
  }
  if (authorization.validBefore <= nowSeconds) {
    return new AppError('expired_authorization', {
      message:
        'The authorization expired (validBefore has passed); request the resource again and sign the fresh 402',
    });
  }
  return undefined;
}

/** Whether `url` (a client's echo, so anything) is an absolute URL whose path is `path`, under any base path. */
function namesPath(url: unknown, path: string): boolean {
  return typeof url === 'string' && URL.canParse(url) && new URL(url).pathname.endsWith(path);
}

/** The quote id a client echoed from the 402's `extensions.quote`, when it sent no X-Quote-Id. */
function echoedQuoteId(payment: DecodedPayment): string | undefined {
  const echoed = (payment.payload.extensions?.quote as { quote_id?: unknown } | undefined)?.quote_id;
  return typeof echoed === 'string' ? echoed : undefined;
}

function pending(reason: 'settlement_pending' | 'settlement_timeout'): AppError {
  return new AppError(reason, {
    message:
      reason === 'settlement_timeout'
        ? 'Settlement did not confirm in time; retry with the same authorization, it is not consumed'
        : 'The payment is verified but not settled yet; retry with the same authorization',
  });
}

function notFound(): AppError {
  return new AppError('not_found', { message: 'No such listing for sale' });
}

/** `403 suspended`: the operator stopped the sale; holders still re-fetch what they own. */
export function suspendedListing(listing: { owner: string; slug: string; suspensionReason: string | null }) {
  return new AppError('suspended', {
    message: `${listing.owner}/${listing.slug} is suspended by the operator: ${listing.suspensionReason ?? ''}. Nothing is sold while it lasts; holders still re-fetch the versions they own`,
    details: { reason: listing.suspensionReason ?? '' },
  });
}

function retired(): AppError {
  return new AppError('retired', {
    message: 'This listing is no longer sold; holders can still fetch every version they own',
  });
}
