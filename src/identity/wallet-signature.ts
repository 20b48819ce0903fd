import { type Address, getAddress } from 'viem';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { AppError, isAppError, sentences } from '../platform/errors.js';
import { parseClientJson } from '../platform/http/json-body.js';
import { signToken, verifyToken } from '../platform/signed-token.js';
import { issueChallenge, refusedAs, useChallenge } from './challenges.js';
import { WalletProofSchema } from './schemas.js';

/** The largest header we decode: an ERC-6492 signature with deployment data fits comfortably. */
const MAX_HEADER_LENGTH = 32 * 1024;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface WalletProof {
  address: Address;
  nonce: string;
  signature: string;
}

/** The header value for a signed `wallet_ownership` challenge (DESIGN.md item 3): standard base64 of JSON. */
export function encodeWalletSignature(proof: WalletProof): string {
  return Buffer.from(
    JSON.stringify({ address: proof.address, nonce: proof.nonce, signature: proof.signature }),
    'utf8',
  ).toString('base64');
}

/**
 * A wallet session: one signed `wallet_ownership` challenge, exchanged for a token the
 * `X-Wallet-Signature` header carries in its place for half an hour. A person reading their
 * library or re-downloading in a browser signs once, not once per request (D-124). Stateless: it
 * grants only what the signature it replaces grants (reading what the wallet holds, fetching it,
 * the update price), never a payment, so it needs no revocation list; forgetting it signs out.
 */
const WALLET_SESSION_KIND = 'wallet-session';
export const WALLET_SESSION_MS = 30 * 60_000;
const WalletSessionPayload = z.object({ address: z.string(), expires: z.number().int() });

export async function startWalletSession(
  ctx: Pick<AppContext, 'database' | 'clock' | 'chainClient' | 'appSecret'>,
  proof: WalletProof,
): Promise<{ token: string; address: Address; expiresAt: Date }> {
  await useChallenge(
    ctx,
    { nonce: proof.nonce, signature: proof.signature },
    { purpose: 'wallet_ownership', address: proof.address },
  ).catch(refusedAs('invalid_signature'));
  const address = getAddress(proof.address);
  const expiresAt = new Date(ctx.clock.now().getTime() + WALLET_SESSION_MS);
  const token = signToken(ctx.appSecret, WALLET_SESSION_KIND, { address, expires: expiresAt.getTime() });
  return { token, address, expiresAt };
}

function walletSessionAddress(ctx: Pick<AppContext, 'clock' | 'appSecret'>, value: string): Address {
  const session = verifyToken(ctx.appSecret, WALLET_SESSION_KIND, value, WalletSessionPayload);
  if (!session) {
    throw new AppError('invalid_signature', { message: 'This wallet session is not one of this service' });
  }
  if (session.expires <= ctx.clock.now().getTime()) {
    throw new AppError('invalid_signature', {
      message: 'This wallet session has expired: sign a new wallet_ownership challenge',
    });
  }
  return getAddress(session.address);
}

/**
 * Authenticates an `X-Wallet-Signature` header: a single-use `wallet_ownership` challenge signed by
 * the address it names, or a wallet session made from one. Returns the checksummed address. Every
 * failure (absent, malformed, unknown, expired, used, wrong purpose or address, bad signature) is
 * `401 invalid_signature`.
 */
export async function verifyWalletSignatureHeader(
  ctx: Pick<AppContext, 'database' | 'clock' | 'chainClient' | 'appSecret'>,
  header: string | string[] | undefined,
): Promise<Address> {
  if (typeof header === 'string' && header.trim().startsWith(`${WALLET_SESSION_KIND}.`)) {
    return walletSessionAddress(ctx, header.trim());
  }
  const proof = decodeWalletSignature(header);
  await useChallenge(
    ctx,
    { nonce: proof.nonce, signature: proof.signature },
    { purpose: 'wallet_ownership', address: proof.address },
  ).catch(refusedAs('invalid_signature', 'X-Wallet-Signature'));
  return proof.address;
}

function decodeWalletSignature(header: string | string[] | undefined): WalletProof {
  if (header === undefined) {
    throw new AppError('invalid_signature', { message: 'X-Wallet-Signature is missing' });
  }
  const value = Array.isArray(header) ? undefined : header.trim();
  if (!value || value.length > MAX_HEADER_LENGTH || !BASE64.test(value)) throw malformed();
  let json: unknown;
  try {
    json = parseClientJson(Buffer.from(value, 'base64').toString('utf8'));
  } catch {
    throw malformed();
  }
  const parsed = WalletProofSchema.safeParse(json);
  if (!parsed.success) throw malformed();
  return parsed.data;
}

function malformed(): AppError {
  return new AppError('invalid_signature', {
    message: 'X-Wallet-Signature must be standard base64 of JSON {"address","nonce","signature"}',
  });
}

/** A fresh `wallet_ownership` challenge for a wallet, as a refusal or an MCP result hands it out. */
export interface WalletChallengeOffer {
  address: string;
  nonce: string;
  message: string;
  expires_at: string;
}

export async function walletChallengeOffer(
  ctx: Pick<AppContext, 'database' | 'clock' | 'config'>,
  address: Address,
): Promise<WalletChallengeOffer> {
  const challenge = await issueChallenge(ctx, { address, purpose: 'wallet_ownership' });
  return {
    address: challenge.address,
    nonce: challenge.nonce,
    message: challenge.message,
    expires_at: challenge.expiresAt.toISOString(),
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Codes a fresh signature can turn around: a signature refused, or a wallet that holds too little. */
const CHALLENGED: ReadonlySet<string> = new Set(['invalid_signature', 'not_entitled']);

/** A wallet a request names: the address inside its `X-Wallet-Signature` (valid or not), else `?address=`. */
export interface NamedWallet {
  header: string | string[] | undefined;
  address?: string;
}

function namedAddress(named: NamedWallet): Address | undefined {
  let address = named.address;
  try {
    if (named.header !== undefined) address = decodeWalletSignature(named.header).address;
  } catch {
    // A header that does not decode names no wallet; `?address=` may.
  }
  return address && ADDRESS.test(address) ? getAddress(address) : undefined;
}

/** A fresh challenge as the HTTP routes hand it out: for the `X-Wallet-Signature` of the next call. */
export interface HttpWalletChallenge extends WalletChallengeOffer {
  header: 'X-Wallet-Signature';
  how: string;
}

/**
 * A fresh challenge for the wallet a request names, for its next call: every answer of a wallet
 * route, success or refusal, carries one when the request names a wallet, so a client never asks
 * for a challenge first. Nothing when it names none. A challenge says nothing of what the wallet
 * holds.
 */
export async function nextWalletChallenge(
  ctx: Pick<AppContext, 'database' | 'clock' | 'config'>,
  named: NamedWallet,
): Promise<HttpWalletChallenge | undefined> {
  const address = namedAddress(named);
  if (!address) return undefined;
  return {
    ...(await walletChallengeOffer(ctx, address)),
    header: 'X-Wallet-Signature',
    how: 'Sign `message` verbatim with EIP-191 personal_sign using this address, then send the header X-Wallet-Signature: standard base64 of the JSON {"address","nonce","signature"}. It works once, within 5 minutes.',
  };
}

/**
 * `error`, and when it is a wallet's refusal (`401 invalid_signature`, `403 not_entitled`) on a
 * request that names the wallet, the same refusal carrying a fresh challenge for that wallet in
 * `details.wallet_challenge`: the retry needs no request for a challenge first.
 */
export async function withWalletChallenge(
  ctx: Pick<AppContext, 'database' | 'clock' | 'config'>,
  error: unknown,
  named: NamedWallet,
): Promise<unknown> {
  if (!isAppError(error) || !CHALLENGED.has(error.code)) return error;
  const challenge = await nextWalletChallenge(ctx, named);
  if (!challenge) return error;
  return new AppError(error.code, {
    message: sentences(
      error.message,
      error.code === 'invalid_signature'
        ? `Sign details.wallet_challenge.message with ${challenge.address} and send it as X-Wallet-Signature`
        : `A fresh challenge for ${challenge.address} is in details.wallet_challenge`,
    ),
    details: { ...error.details, wallet_challenge: challenge },
    headers: error.headers,
  });
}
