import { stringToHex } from 'viem';
import { api, query } from './api.js';

/** An EIP-1193 provider: an injected browser wallet, or the devnet's test wallet in the tab. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export type Address = `0x${string}`;
export type ChallengePurpose = 'address_proof' | 'step_up' | 'rotate_key' | 'wallet_ownership';

function provider(): Eip1193Provider {
  const injected = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (!injected) throw new Error(NO_WALLET);
  return injected;
}

/** What to do without a browser wallet, wherever one is needed. */
export const NO_WALLET =
  'No browser wallet was found in this browser. Install one (MetaMask, Coinbase Wallet and Rabby are browser extensions), then reload this page.';

/** EIP-1193's code for a request the person declined in their wallet. */
export function declinedInWallet(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 4001;
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
  wallet: Eip1193Provider = provider(),
): Promise<{ nonce: string; signature: string }> {
  const challenge = await api<Challenge>(
    'GET',
    `/auth/challenge${query({ address, purpose, new_payout_address: newPayoutAddress })}`,
  );
  const signature = (await wallet.request({
    method: 'personal_sign',
    params: [stringToHex(challenge.message), address],
  })) as string;
  return { nonce: challenge.nonce, signature };
}
