import { api, query } from './api.js';

/** An injected EIP-1193 provider (`window.ethereum`): browser wallets and the test wallet alike. */
interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export type Address = `0x${string}`;
export type ChallengePurpose = 'address_proof' | 'step_up' | 'rotate_key' | 'wallet_ownership';

function provider(): Eip1193Provider {
  const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (!injected) {
    throw new Error('No browser wallet was found. Install one (or sign in with an API key instead).');
  }
  return injected;
}

export function hasWallet(): boolean {
  return (window as unknown as { ethereum?: unknown }).ethereum !== undefined;
}

/** The account the wallet has selected, after asking the person to connect it. */
export async function connectWallet(): Promise<Address> {
  const accounts = (await provider().request({ method: 'eth_requestAccounts' })) as string[];
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account.');
  return account.toLowerCase() as Address;
}

function utf8Hex(text: string): string {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

interface Challenge {
  nonce: string;
  message: string;
}

/**
 * Fetches a single-use challenge for `address` and has the wallet sign it (EIP-191
 * `personal_sign`, the message verbatim). The wallet must have `address` selected.
 */
export async function signChallenge(
  address: Address,
  purpose: ChallengePurpose,
  newPayoutAddress?: string,
): Promise<{ nonce: string; signature: string }> {
  const challenge = await api<Challenge>(
    'GET',
    `/auth/challenge${query({ address, purpose, new_payout_address: newPayoutAddress })}`,
  );
  const signature = (await provider().request({
    method: 'personal_sign',
    params: [utf8Hex(challenge.message), address],
  })) as string;
  return { nonce: challenge.nonce, signature };
}
