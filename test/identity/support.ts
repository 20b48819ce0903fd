import { randomInt, randomUUID } from 'node:crypto';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { createInvites } from '../../src/identity/invites.js';
import { TERMS_VERSION } from '../../src/identity/terms.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import type { TestApp } from '../support/app.js';

export type Purpose = 'address_proof' | 'step_up' | 'rotate_key' | 'wallet_ownership';

export function newWallet(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

export interface ChallengeBody {
  nonce: string;
  purpose: Purpose;
  address: string;
  message: string;
  issued_at: string;
  expires_at: string;
}

export async function getChallenge(
  t: TestApp,
  address: string,
  purpose: Purpose,
  newPayoutAddress?: string,
): Promise<ChallengeBody> {
  const query = new URLSearchParams({ address, purpose });
  if (newPayoutAddress) query.set('new_payout_address', newPayoutAddress);
  const res = await t.app.inject({ url: `/api/auth/challenge?${query}`, remoteAddress: freshIp() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A challenge minted for `wallet` and signed by it (or by `signer`, to forge). */
export async function signedChallenge(
  t: TestApp,
  wallet: PrivateKeyAccount,
  purpose: Purpose,
  options: { newPayoutAddress?: string; signer?: PrivateKeyAccount } = {},
): Promise<{ nonce: string; signature: string }> {
  const challenge = await getChallenge(t, wallet.address, purpose, options.newPayoutAddress);
  const signature = await (options.signer ?? wallet).signMessage({ message: challenge.message });
  return { nonce: challenge.nonce, signature };
}

export async function walletSignatureHeader(t: TestApp, wallet: PrivateKeyAccount): Promise<string> {
  const { nonce, signature } = await signedChallenge(t, wallet, 'wallet_ownership');
  return encodeWalletSignature({ address: wallet.address, nonce, signature });
}

/** `POST /api/auth/wallet-sessions` for `wallet` with `proof` (by default a fresh signed challenge): the raw answer. */
export async function startWalletSession(
  t: TestApp,
  wallet: PrivateKeyAccount,
  proof?: { nonce: string; signature: string },
) {
  const signed = proof ?? (await signedChallenge(t, wallet, 'wallet_ownership'));
  return t.app.inject({
    method: 'POST',
    url: '/api/auth/wallet-sessions',
    remoteAddress: freshIp(),
    payload: { address: wallet.address, ...signed },
  });
}

export async function newInvite(t: TestApp): Promise<string> {
  const [code] = await createInvites(t.ctx.database.db, 1);
  return code!;
}

let handleCounter = 0;
export function uniqueHandle(): string {
  handleCounter += 1;
  return `creator-${handleCounter}-${randomUUID().slice(0, 6)}`;
}

export interface RegistrationBody {
  handle: string;
  payout_address: string;
  accepted_terms_version: string;
  address_proof?: { nonce: string; signature: string };
  invite_code?: string;
  abuse_contact: string;
}

/** A complete, valid registration body for a new wallet. */
export async function registrationBody(
  t: TestApp,
  wallet: PrivateKeyAccount = newWallet(),
  overrides: Partial<RegistrationBody> = {},
): Promise<RegistrationBody> {
  return {
    handle: uniqueHandle(),
    payout_address: wallet.address,
    accepted_terms_version: TERMS_VERSION,
    address_proof: await signedChallenge(t, wallet, 'address_proof'),
    invite_code: await newInvite(t),
    abuse_contact: 'abuse@example.com',
    ...overrides,
  };
}

/**
 * Registration is limited to 5 per hour per IP, challenges to the auth budget: each request a
 * test makes comes from an address of its own. A shared Redis keeps counts across test files and
 * runs, so each file starts at a random point of 10.0.0.0/8 rather than at its first address.
 */
let ipCounter = randomInt(1 << 24);
export function freshIp(): string {
  ipCounter = (ipCounter + 1) % (1 << 24);
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

export function postCreator(
  t: TestApp,
  body: unknown,
  headers: Record<string, string> = {},
  remoteAddress = freshIp(),
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/creators',
    payload: body as object,
    headers,
    remoteAddress,
  });
}

export interface RegisteredCreator {
  wallet: PrivateKeyAccount;
  apiKey: string;
  id: string;
  handle: string;
  body: Record<string, unknown>;
}

export async function registerCreator(
  t: TestApp,
  overrides: Partial<RegistrationBody> = {},
): Promise<RegisteredCreator> {
  const wallet = newWallet();
  const res = await postCreator(t, await registrationBody(t, wallet, overrides));
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { wallet, apiKey: body.api_key, id: body.id, handle: body.handle, body };
}

export function bearer(apiKey: string): Record<string, string> {
  return { authorization: `Bearer ${apiKey}` };
}

export function expectError(
  res: { statusCode: number; json(): unknown; body: string },
  status: number,
  code: string,
) {
  expect({ status: res.statusCode, code: (res.json() as { code?: string }).code }, res.body).toEqual({
    status,
    code,
  });
}
