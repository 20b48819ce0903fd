import type { Address } from 'viem';
import type { AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { parseClientJson } from '../platform/json-body.js';
import { refusedAs, useChallenge } from './challenges.js';
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
 * Authenticates an `X-Wallet-Signature` header: a single-use `wallet_ownership` challenge signed by
 * the address it names. Returns the checksummed address. Every failure (absent, malformed, unknown,
 * expired, used, wrong purpose or address, bad signature) is `401 invalid_signature`.
 */
export async function verifyWalletSignatureHeader(
  ctx: Pick<AppContext, 'database' | 'clock' | 'chainClient'>,
  header: string | string[] | undefined,
): Promise<Address> {
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
