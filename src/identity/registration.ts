import type { Address } from 'viem';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { logEvent } from '../platform/events.js';
import { assertCountryAllowed, assertNotSanctioned } from '../platform/limits/compliance.js';
import { issueApiKey } from './api-keys.js';
import { consumeChallenge, refusedAs, type SignedChallenge, verifyChallenge } from './challenges.js';
import { addressTaken } from './creators.js';
import {
  findReplay,
  IdempotencyConflict,
  idempotentRequest,
  recordResponse,
  type StoredResponse,
} from './idempotency.js';
import { consumeInvite } from './invites.js';
import { claimPayoutAddress, findClaim, findCreatorRowByHandle, insertCreator } from './store.js';
import { TERMS_VERSION } from './terms.js';
import { createdCreatorBody } from './views.js';

export interface RegistrationInput {
  handle: string;
  payoutAddress: Address;
  acceptedTermsVersion: string;
  addressProof?: SignedChallenge;
  inviteCode?: string;
  abuseContact: string;
}

export interface RegistrationRequest {
  /** The caller's country (`requestCountry`), when the proxy reports it. */
  country?: string;
  /** The `Idempotency-Key` header (a uuid), when sent. */
  idempotencyKey?: string;
  /** The request body as received, which the Idempotency-Key is bound to. */
  body: unknown;
  /**
   * Uses up one of the caller's registrations (5 per hour per IP) or throws `429 rate_limited`.
   * Called when the attempt reaches the signature check: a malformed or otherwise refused attempt,
   * or a replay, does not use one up.
   */
  countAttempt(): Promise<void>;
}

export interface RegistrationResult extends StoredResponse {
  /** True when this is the stored response of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

const ROUTE = 'POST /api/creators';

/**
 * Headless registration: a creator, its payout address bound by a signed `address_proof`, and an
 * agent key shown once. With an Idempotency-Key the identical 201 replays for 24 hours; requests
 * racing with one key create one creator, and the others replay its response.
 */
export async function registerCreator(
  ctx: AppContext,
  input: RegistrationInput,
  request: RegistrationRequest,
): Promise<RegistrationResult> {
  const idempotent = request.idempotencyKey
    ? idempotentRequest(ROUTE, request.idempotencyKey, request.body)
    : undefined;
  if (idempotent) {
    const replay = await findReplay(ctx, idempotent);
    if (replay) return { ...replay, replayed: true };
  }
  try {
    const body = await createCreator(ctx, input, request, async (tx, response, at) => {
      if (idempotent) await recordResponse(tx, ctx, idempotent, response, at);
    });
    logEvent(ctx.log, 'creator.registered', { creator_id: body.id, handle: body.handle });
    return { statusCode: 201, body, replayed: false };
  } catch (error) {
    // A concurrent request with the same key may have won the race (same handle, same challenge):
    // answer with its response rather than with the conflict it caused us.
    if (idempotent && (error instanceof AppError || error instanceof IdempotencyConflict)) {
      const replay = await findReplay(ctx, idempotent);
      if (replay) return { ...replay, replayed: true };
    }
    if (error instanceof IdempotencyConflict) throw new AppError('internal', { cause: error });
    throw error;
  }
}

type RecordInTransaction = (
  tx: AppContext['database']['db'],
  response: StoredResponse,
  at: Date,
) => Promise<void>;

async function createCreator(
  ctx: AppContext,
  input: RegistrationInput,
  request: Pick<RegistrationRequest, 'country' | 'countAttempt'>,
  record: RecordInTransaction,
) {
  const { compliance } = ctx.config;
  assertCountryAllowed(compliance, request.country);
  if (input.acceptedTermsVersion !== TERMS_VERSION) {
    throw new AppError('terms_version_stale', {
      message: `accepted_terms_version must be ${TERMS_VERSION}, the version of GET /api/terms`,
    });
  }
  if (!input.inviteCode) {
    throw new AppError('invite_required', { message: 'invite_code is required to register in this version' });
  }
  await assertNotSanctioned(compliance, input.payoutAddress);
  if (!input.addressProof) {
    throw new AppError('payout_address_unverified', {
      message: 'address_proof is required: sign an address_proof challenge with the payout address',
    });
  }
  await request.countAttempt();
  const proof = await verifyChallenge(ctx, input.addressProof, {
    purpose: 'address_proof',
    address: input.payoutAddress,
  }).catch(refusedAs('payout_address_unverified', 'address_proof'));

  // Checked first for a clear answer; the transaction below enforces both against races.
  const db = ctx.database.db;
  if (await findCreatorRowByHandle(db, input.handle)) throw handleTaken();
  if (await findClaim(db, input.payoutAddress)) throw addressTaken();

  const at = ctx.clock.now();
  return db.transaction(async (tx) => {
    const creator = await insertCreator(tx, {
      handle: input.handle,
      payoutAddress: input.payoutAddress,
      abuseContact: input.abuseContact,
      acceptedTermsVersion: input.acceptedTermsVersion,
      createdAt: at,
    });
    if (!creator) throw handleTaken();
    // Inside the transaction, so a registration that fails later does not use the invite up.
    if (!(await consumeInvite(tx, input.inviteCode!, creator.id, at))) {
      throw new AppError('invite_required', { message: 'The invite code is unknown or already used' });
    }
    await consumeChallenge(tx, proof, at).catch(refusedAs('payout_address_unverified', 'address_proof'));
    if (!(await claimPayoutAddress(tx, input.payoutAddress, creator.id, at))) throw addressTaken();
    const key = await issueApiKey(tx, { creatorId: creator.id, kind: 'agent', at });
    const body = createdCreatorBody(
      {
        id: creator.id,
        handle: creator.handle,
        payoutAddress: input.payoutAddress,
        abuseContact: creator.abuseContact,
        acceptedTermsVersion: creator.acceptedTermsVersion,
        createdAt: creator.createdAt,
        pendingChanges: [],
      },
      key,
    );
    await record(tx, { statusCode: 201, body }, at);
    return body;
  });
}

/** No error code names a taken handle; it is a field that does not validate (docs/DECISIONS.md). */
function handleTaken(): AppError {
  return AppError.invalid([{ field: 'handle', reason: 'already taken' }], 'This handle is already taken');
}
