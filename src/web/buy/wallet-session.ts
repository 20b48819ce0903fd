import { answerError, callApi } from '../api.js';
import { type Address, signChallenge } from '../wallet.js';
import type { WalletOption } from './wallets.js';

/**
 * The wallet's proof for the buyer's pages: one signed `wallet_ownership` challenge exchanged for a
 * 30-minute wallet session, kept in this tab's sessionStorage, so reading the library, the update
 * price and every free download asks the wallet once, not once per request.
 */
const STORAGE_KEY = 'repo402.wallet-session';
/** A session this close to its end is not used: a download started now must not outlive it. */
const MARGIN_MS = 60_000;

export interface StoredSession {
  /** The wallet it was signed with (`WalletOption.rdns`). */
  wallet: string;
  address: Address;
  token: string;
  expiresAt: number;
}

/** The tab's wallet session while it has time left: the page reconnects that wallet by itself. */
export function storedSession(): StoredSession | undefined {
  try {
    const session = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as StoredSession | null;
    if (session && session.expiresAt - MARGIN_MS > Date.now()) return session;
  } catch {
    // A value that does not parse is no session.
  }
  return undefined;
}

/** The value of `X-Wallet-Signature` for `address`: the tab's session, or a new one the wallet signs for. */
export async function walletSession(wallet: WalletOption, address: Address): Promise<string> {
  const kept = storedSession();
  if (kept?.address === address && kept.wallet === wallet.rdns) return kept.token;
  const proof = await signChallenge(address, 'wallet_ownership', undefined, wallet.provider);
  const answer = await callApi('POST', '/auth/wallet-sessions', { body: { address, ...proof } });
  if (answer.status !== 201) throw answerError(answer);
  const session = answer.body as { wallet_session: string; expires_at: string };
  const token = session.wallet_session;
  sessionStorage.setItem(
    STORAGE_KEY,
    JSON.stringify({
      wallet: wallet.rdns,
      address,
      token,
      expiresAt: Date.parse(session.expires_at),
    } satisfies StoredSession),
  );
  return token;
}

/** Forgets the tab's session: the next read asks the wallet again. */
export function forgetWalletSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
