import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import {
  type AuthenticatedCreator,
  type IssuedApiKey,
  issueApiKey,
  type RevokedKeys,
  replaceAllKeys,
  revokeApiKey,
} from './api-keys.js';
import { type ChallengePurpose, consumeChallenge, refusedAs, verifyChallenge } from './challenges.js';
import { assertCreatorNotSuspended, type CreatorRef, findCreatorByPayoutAddress } from './creators.js';
import { lockCreator } from './store.js';
import type { WalletProof } from './wallet-signature.js';

export interface KeyForCreator {
  creator: CreatorRef;
  key: IssuedApiKey;
}

/**
 * Key rotation: a `rotate_key` signature from the payout address in force is the credential (no
 * Authorization header). Every agent key and web session of the creator is revoked in the same
 * transaction that issues the new agent key, which carries every current scope.
 */
export async function rotateKeys(
  ctx: AppContext,
  proof: WalletProof,
): Promise<KeyForCreator & { revoked: RevokedKeys }> {
  const { creator, result } = await withWalletProof(ctx, proof, 'rotate_key', (tx, creator, at) =>
    replaceAllKeys(tx, creator.id, at),
  );
  return { creator, ...result };
}

/** Web sign-in: a `wallet_ownership` signature from the payout address in force gives a 12-hour session key. */
export async function startSession(ctx: AppContext, proof: WalletProof): Promise<KeyForCreator> {
  const { creator, result } = await withWalletProof(
    ctx,
    proof,
    'wallet_ownership',
    async (tx, creator, at) => {
      await assertCreatorNotSuspended(tx, creator.id);
      return issueApiKey(tx, { creatorId: creator.id, kind: 'session', at });
    },
  );
  return { creator, key: result };
}

/** Sign-out: revokes the session key the request was made with. */
export async function endSession(ctx: AppContext, creator: AuthenticatedCreator): Promise<void> {
  if (creator.key.kind !== 'session') {
    throw AppError.invalid(
      [{ field: 'authorization', reason: 'not a web session key' }],
      'Only a web session key signs out; an agent key is replaced with POST /api/auth/rotate-key',
    );
  }
  await revokeApiKey(ctx.database.db, creator.key.id, ctx.clock.now());
}

/** Verifies the signed challenge, then uses it up and runs `issue` in one transaction holding the creator's lock. */
async function withWalletProof<T>(
  ctx: AppContext,
  proof: WalletProof,
  purpose: ChallengePurpose,
  issue: (tx: AppContext['database']['db'], creator: CreatorRef, at: Date) => Promise<T>,
): Promise<{ creator: CreatorRef; result: T }> {
  const challenge = await verifyChallenge(
    ctx,
    { nonce: proof.nonce, signature: proof.signature },
    { purpose, address: proof.address },
  ).catch(refusedAs('invalid_signature'));
  const at = ctx.clock.now();
  const creator = await findCreatorByPayoutAddress(ctx.database.db, proof.address, at);
  if (!creator) {
    throw new AppError('not_found', {
      message: 'No creator has this address as its payout address in force',
    });
  }
  const result = await ctx.database.db.transaction(async (tx) => {
    await lockCreator(tx, creator.id);
    await consumeChallenge(tx, challenge, at).catch(refusedAs('invalid_signature'));
    return issue(tx, creator, at);
  });
  return { creator, result };
}
