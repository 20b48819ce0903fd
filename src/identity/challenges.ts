import { randomBytes } from 'node:crypto';
import { type Address, isAddressEqual } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError, type ErrorCode } from '../platform/errors.js';
import type { CHALLENGE_PURPOSES } from './schemas.js';
import { verifyWalletSignature } from './signatures.js';
import {
  type ChallengeRow,
  deleteChallengesExpiredBefore,
  findChallenge,
  insertChallenge,
  markChallengeUsed,
} from './store.js';

export type ChallengePurpose = (typeof CHALLENGE_PURPOSES)[number];

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** Expired challenges are kept this long, so a late use is told "expired" rather than "unknown". */
const EXPIRED_RETENTION_MS = 60 * 60 * 1000;
const NONCE_PATTERN = /^[0-9a-f]{32}$/;

export const PURPOSE_RESOURCE = 'urn:repo402:purpose:';
export const NEW_PAYOUT_RESOURCE = 'urn:repo402:new_payout_address:';

const STATEMENTS: Record<ChallengePurpose, string> = {
  address_proof: 'Prove that you control this address, to bind it as your repo402 payout address.',
  step_up: 'Authorise a change to your repo402 account.',
  rotate_key: 'Rotate your repo402 API key. The current key stops working at once.',
  wallet_ownership: 'Prove that you control this wallet to repo402.',
};

/**
 * viem accepts a DNS name, an IPv4 address or localhost (with a port) as the EIP-4361 domain, but
 * not an IPv6 literal: refuse such a BASE_URL at start-up rather than on every challenge.
 */
export function assertChallengeDomain(baseUrl: string): void {
  try {
    createSiweMessage({
      domain: new URL(baseUrl).host,
      uri: baseUrl,
      address: '0x0000000000000000000000000000000000000000',
      // Any chain: only the domain is in question here.
      chainId: 1,
      nonce: '0'.repeat(32),
      version: '1',
    });
  } catch {
    throw new Error(
      `BASE_URL=${baseUrl}: its host cannot be the domain of a sign-in message; use a DNS name or an IPv4 address`,
    );
  }
}

export interface IssuedChallenge {
  nonce: string;
  purpose: ChallengePurpose;
  address: Address;
  message: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * A new challenge (DESIGN.md item 1): an EIP-4361 message naming our domain, the chain payments are
 * made on (8453, Base; 84532 on testnet, Base Sepolia), the nonce,
 * a 5-minute expiry and the purpose (and, for a payout rebind, the one address it may bind). The
 * exact message is stored; a signature must be over those bytes.
 */
export async function issueChallenge(
  ctx: Pick<AppContext, 'database' | 'clock' | 'config'>,
  input: { address: Address; purpose: ChallengePurpose; newPayoutAddress?: Address },
): Promise<IssuedChallenge> {
  if (input.newPayoutAddress && input.purpose !== 'step_up') {
    throw AppError.invalid([{ field: 'new_payout_address', reason: 'only allowed with purpose step_up' }]);
  }
  const issuedAt = ctx.clock.now();
  const expiresAt = new Date(issuedAt.getTime() + CHALLENGE_TTL_MS);
  const nonce = randomBytes(16).toString('hex');
  const base = new URL(ctx.config.baseUrl);
  const resources = [`${PURPOSE_RESOURCE}${input.purpose}`];
  if (input.newPayoutAddress) resources.push(`${NEW_PAYOUT_RESOURCE}${input.newPayoutAddress}`);
  const message = createSiweMessage({
    domain: base.host,
    uri: ctx.config.baseUrl,
    address: input.address,
    chainId: ctx.config.payments.network.chainId,
    nonce,
    issuedAt,
    expirationTime: expiresAt,
    statement: input.newPayoutAddress
      ? `Authorise changing your repo402 payout address to ${input.newPayoutAddress}, and nothing else.`
      : STATEMENTS[input.purpose],
    resources,
    version: '1',
  });
  const db = ctx.database.db;
  await insertChallenge(db, {
    nonce,
    purpose: input.purpose,
    address: input.address,
    newPayoutAddress: input.newPayoutAddress ?? null,
    message,
    issuedAt,
    expiresAt,
  });
  await deleteChallengesExpiredBefore(db, new Date(issuedAt.getTime() - EXPIRED_RETENTION_MS));
  return { nonce, purpose: input.purpose, address: input.address, message, issuedAt, expiresAt };
}

export type ChallengeFailure =
  | 'malformed'
  | 'unknown'
  | 'expired'
  | 'used'
  | 'wrong_purpose'
  | 'wrong_address'
  | 'bad_signature';

const FAILURE_MESSAGES: Record<ChallengeFailure, string> = {
  malformed: 'The signed challenge is malformed',
  unknown: 'Unknown challenge nonce; take a new challenge',
  expired: 'The challenge expired; take a new challenge',
  used: 'The challenge was already used; take a new challenge',
  wrong_purpose: 'The challenge was issued for another purpose and is refused on this route',
  wrong_address: 'The challenge was issued for another address',
  bad_signature: 'The signature does not match the challenge message and address',
};

/** Why a signed challenge was refused. Callers turn it into their route's error code. */
export class ChallengeRefused extends Error {
  constructor(readonly reason: ChallengeFailure) {
    super(FAILURE_MESSAGES[reason]);
    this.name = 'ChallengeRefused';
  }

  toAppError(code: ErrorCode, prefix?: string): AppError {
    return new AppError(code, { message: prefix ? `${prefix}: ${this.message}` : this.message });
  }
}

/** Rethrows a refusal as `code`; anything else (a database or chain fault) passes through. */
export function refusedAs(code: ErrorCode, prefix?: string) {
  return (error: unknown): never => {
    throw error instanceof ChallengeRefused ? error.toAppError(code, prefix) : error;
  };
}

export interface SignedChallenge {
  nonce: string;
  signature: string;
}

export interface VerifiedChallenge {
  nonce: string;
  purpose: ChallengePurpose;
  address: Address;
  newPayoutAddress: Address | null;
}

export interface ChallengeExpectation {
  purpose: ChallengePurpose;
  /** When given, the challenge must have been issued to this address. */
  address?: Address;
}

/**
 * Checks a signed challenge against what the route expects, without using it up: the caller
 * consumes it (`consumeChallenge`) in the transaction that acts on it, so a request that fails
 * later does not burn the challenge.
 */
export async function verifyChallenge(
  ctx: Pick<AppContext, 'database' | 'clock' | 'chainClient'>,
  signed: SignedChallenge,
  expect: ChallengeExpectation,
): Promise<VerifiedChallenge> {
  if (!NONCE_PATTERN.test(signed.nonce)) throw new ChallengeRefused('malformed');
  const row = await findChallenge(ctx.database.db, signed.nonce);
  if (!row) throw new ChallengeRefused('unknown');
  if (row.purpose !== expect.purpose) throw new ChallengeRefused('wrong_purpose');
  if (row.usedAt) throw new ChallengeRefused('used');
  if (ctx.clock.now() >= row.expiresAt) throw new ChallengeRefused('expired');
  const address = row.address as Address;
  if (expect.address && !isAddressEqual(expect.address, address)) throw new ChallengeRefused('wrong_address');
  const valid = await verifyWalletSignature(ctx.chainClient, {
    address,
    message: row.message,
    signature: signed.signature,
  });
  if (!valid) throw new ChallengeRefused('bad_signature');
  return verified(row);
}

/**
 * Uses a verified challenge up. Throws `used` when a concurrent request got there first (or it
 * expired meanwhile): of any number of concurrent uses at most one succeeds.
 */
export async function consumeChallenge(db: Db, challenge: VerifiedChallenge, at: Date): Promise<void> {
  if (!(await markChallengeUsed(db, challenge.nonce, at))) throw new ChallengeRefused('used');
}

/** Verify and consume in one step, for uses with no transaction of their own. */
export async function useChallenge(
  ctx: Pick<AppContext, 'database' | 'clock' | 'chainClient'>,
  signed: SignedChallenge,
  expect: ChallengeExpectation,
): Promise<VerifiedChallenge> {
  const challenge = await verifyChallenge(ctx, signed, expect);
  await consumeChallenge(ctx.database.db, challenge, ctx.clock.now());
  return challenge;
}

function verified(row: ChallengeRow): VerifiedChallenge {
  return {
    nonce: row.nonce,
    purpose: row.purpose,
    address: row.address as Address,
    newPayoutAddress: (row.newPayoutAddress as Address | null) ?? null,
  };
}
