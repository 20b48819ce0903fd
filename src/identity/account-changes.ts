import type { FastifyBaseLogger } from 'fastify';
import { type Address, isAddressEqual } from 'viem';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError } from '../platform/errors.js';
import { assertCountryAllowed, assertNotSanctioned } from '../platform/limits/compliance.js';
import type { AuthenticatedCreator } from './api-keys.js';
import {
  ChallengeRefused,
  consumeChallenge,
  refusedAs,
  type SignedChallenge,
  type VerifiedChallenge,
  verifyChallenge,
} from './challenges.js';
import { addressTaken, CHANGE_DELAY_MS, type CreatorView, creatorView } from './creators.js';
import { deliverAfterCommit, enqueueMessage } from './outbox.js';
import {
  type ChangeField,
  cancelPendingChanges,
  claimPayoutAddress,
  findClaim,
  insertChange,
} from './store.js';

export interface ChangeRequest {
  payoutAddress?: Address;
  abuseContact?: string;
  stepUp?: SignedChallenge;
  addressProof?: SignedChallenge;
  /** The caller's country (`requestCountry`): a payout address is not rebound from a blocked one. */
  country?: string;
}

/**
 * Requests a payout address and/or abuse contact change. Both need `step_up`, a fresh signature
 * from the payout address in force; a payout rebind needs a step_up minted for that new address
 * and an `address_proof` from it. Nothing changes now: the new values come into force 48 hours
 * later, and a newer request for the same field replaces a pending one (sending the value in force
 * cancels it). The abuse contact in force is told of every change.
 */
export async function requestCreatorChanges(
  ctx: AppContext,
  creator: AuthenticatedCreator,
  input: ChangeRequest,
  log: FastifyBaseLogger,
): Promise<CreatorView> {
  if (input.payoutAddress === undefined && input.abuseContact === undefined) {
    throw AppError.invalid([{ field: 'body', reason: 'give payout_address, abuse_contact or both' }]);
  }
  if (input.addressProof && input.payoutAddress === undefined) {
    throw AppError.invalid([{ field: 'address_proof', reason: 'only with a payout_address change' }]);
  }
  if (input.payoutAddress) assertCountryAllowed(ctx.config.compliance, input.country);
  const db = ctx.database.db;
  const before = (await creatorView(db, creator.id, ctx.clock.now()))!;
  const stepUp = await verifyStepUp(ctx, input, before.payoutAddress);

  let addressProof: VerifiedChallenge | undefined;
  if (input.payoutAddress) {
    await assertNotSanctioned(ctx.config.compliance, input.payoutAddress);
    if (!input.addressProof) {
      throw new AppError('payout_address_unverified', {
        message: 'address_proof is required: sign an address_proof challenge with the new payout address',
      });
    }
    addressProof = await verifyChallenge(ctx, input.addressProof, {
      purpose: 'address_proof',
      address: input.payoutAddress,
    }).catch(refusedAs('payout_address_unverified', 'address_proof'));
    const holder = await findClaim(db, input.payoutAddress);
    if (holder && holder !== creator.id) throw addressTaken();
  }

  const at = ctx.clock.now();
  const messageIds = await db.transaction(async (tx) => {
    await consumeChallenge(tx, stepUp, at).catch(refusedAs('invalid_signature', 'step_up'));
    const ids: (string | undefined)[] = [];
    const announce = (field: ChangeField, value: string, inForce: string, what: string) =>
      scheduleChange(tx, { creator, field, value, inForce, what, recipient: before.abuseContact, at });
    if (input.payoutAddress) {
      await consumeChallenge(tx, addressProof!, at).catch(
        refusedAs('payout_address_unverified', 'address_proof'),
      );
      if (!(await claimPayoutAddress(tx, input.payoutAddress, creator.id, at))) throw addressTaken();
      ids.push(
        await announce(
          'payout_address',
          input.payoutAddress,
          before.payoutAddress,
          `the payout address changes from ${before.payoutAddress} to ${input.payoutAddress}`,
        ),
      );
    }
    if (input.abuseContact !== undefined) {
      ids.push(
        await announce(
          'abuse_contact',
          input.abuseContact,
          before.abuseContact,
          `the abuse contact changes from ${before.abuseContact} (this address) to ${input.abuseContact}`,
        ),
      );
    }
    return ids.filter((id) => id !== undefined);
  });
  deliverAfterCommit(ctx, messageIds, log);
  return (await creatorView(db, creator.id, at))!;
}

/**
 * The step-up must come from the payout address in force (`403 step_up_required` otherwise, or when
 * absent); a signature that is not a valid, fresh step_up is `401 invalid_signature`. A step-up
 * minted for a payout rebind authorises that one address and nothing else.
 */
async function verifyStepUp(
  ctx: AppContext,
  input: ChangeRequest,
  bound: Address,
): Promise<VerifiedChallenge> {
  if (!input.stepUp) {
    throw new AppError('step_up_required', {
      message: 'step_up is required: sign a step_up challenge with the payout address in force',
    });
  }
  const stepUp = await verifyChallenge(ctx, input.stepUp, { purpose: 'step_up', address: bound }).catch(
    (error: unknown) => {
      if (error instanceof ChallengeRefused && error.reason === 'wrong_address') {
        throw new AppError('step_up_required', {
          message: 'step_up must be signed by the payout address in force',
        });
      }
      return refusedAs('invalid_signature', 'step_up')(error);
    },
  );
  if (input.payoutAddress) {
    if (!stepUp.newPayoutAddress || !isAddressEqual(stepUp.newPayoutAddress, input.payoutAddress)) {
      throw new AppError('step_up_required', {
        message: `A payout change needs a step_up challenge minted with new_payout_address=${input.payoutAddress}`,
      });
    }
  } else if (stepUp.newPayoutAddress) {
    throw new AppError('step_up_required', {
      message: `This step_up authorises only the payout change to ${stepUp.newPayoutAddress}`,
    });
  }
  return stepUp;
}

/**
 * Replaces any pending change of `field` and, unless the new value is the one in force, records it
 * and queues its announcement to the abuse contact in force. Returns the message id, if any.
 */
async function scheduleChange(
  tx: Db,
  change: {
    creator: AuthenticatedCreator;
    field: ChangeField;
    value: string;
    inForce: string;
    /** The sentence the announcement states, naming old and new value. */
    what: string;
    recipient: string;
    at: Date;
  },
): Promise<string | undefined> {
  const { creator, field, value, at } = change;
  await cancelPendingChanges(tx, creator.id, field, at);
  if (value === change.inForce) return undefined;
  const effectiveAt = new Date(at.getTime() + CHANGE_DELAY_MS);
  await insertChange(tx, { creatorId: creator.id, field, value, requestedAt: at, effectiveAt });
  return enqueueMessage(
    tx,
    {
      kind: `${field}_change`,
      creatorId: creator.id,
      recipient: change.recipient,
      subject: `repo402: ${field.replace('_', ' ')} of ${creator.handle} changes on ${effectiveAt.toISOString()}`,
      body: announcement(creator.handle, change.what, effectiveAt),
    },
    at,
  );
}

function announcement(handle: string, what: string, effectiveAt: Date): string {
  return [
    `A change was requested for the repo402 creator account "${handle}": ${what}.`,
    '',
    `It takes effect at ${effectiveAt.toISOString()}; until then the current values stay in force.`,
    '',
    'If you did not request this, the account’s payout wallet may be compromised. To cancel, send',
    'PATCH /api/creators/me with the current value and a step_up signature from the payout address',
    'in force, before the change takes effect.',
    '',
    'You receive this because this address is the abuse contact in force for that account.',
  ].join('\n');
}
